"""The command line as people use it: pipes, typos, port clashes, real folders, search output, forget, sessions."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import trio

from ctxtrio import Config, open_context

from .runner import ENV, ROOT, cli, command

if TYPE_CHECKING:
    from pathlib import Path


async def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path) -> None:
    """``ctxtrio docs | head -1``: the reader goes away, the command exits 141 with nothing on stderr."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    for number in range(300):
        (docs / f"{number:03}.md").write_text(f"document number {number}\n")
    assert (await cli(data, "ingest", str(docs))).code == 0
    shell = f'{" ".join(command(data, "docs"))} | head -1; echo "rc=${{PIPESTATUS[0]}}" >&2'
    done = await trio.run_process(["bash", "-c", shell], capture_stdout=True, capture_stderr=True, cwd=ROOT, env=ENV)
    assert done.stdout.decode().count("\n") == 1
    assert done.stderr.decode().strip() in ("rc=141", "rc=0"), done.stderr.decode()  # 0 if it all fit the pipe


async def test_unknown_command_suggests_the_nearest(tmp_path: Path) -> None:
    """A typo is an unknown command with a suggestion, exit 2, one line; search takes the rest of the line."""
    ran = await cli(tmp_path / "data", "sesions")
    assert ran.code == 2 and ran.err.count("\n") == 1
    assert "unknown command 'sesions': did you mean sessions?" in ran.err
    assert (await cli(tmp_path / "data", "search", "two", "words")).out.startswith("no match for 'two words'")


async def test_a_port_in_use_is_one_line_naming_it(tmp_path: Path) -> None:
    """A second server on a taken port: exit 2, one line naming host:port and suggesting --port 0."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with trio.fail_after(60):
            done = await trio.run_process(
                [
                    sys.executable,
                    "-m",
                    "ctxtrio",
                    "--http",
                    "--port",
                    str(port),
                    "--no-llm",
                    "--data-dir",
                    str(tmp_path / "data"),
                ],
                capture_stdout=True,
                capture_stderr=True,
                check=False,
                cwd=ROOT,
                env=ENV,
            )
    said = done.stderr.decode()
    assert done.returncode == 2 and said.count("\n") == 1, said
    assert f"127.0.0.1:{port}" in said and "--port 0" in said


async def test_a_folder_with_a_name_that_is_not_utf8_stores_the_rest(tmp_path: Path) -> None:
    """12 good files, one with a name that is not UTF-8, an empty one: 12 stored, the bad name shown escaped (issue 27, 4)."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    for number in range(12):
        (docs / f"f{number}.md").write_text(f"file {number} about rotation\n")
    with open(os.fsencode(docs) + b"/bad\xff.md", "w") as bad:
        bad.write("text under a bad name\n")
    (docs / "__init__.py").write_text("")
    ran = await cli(data, "ingest", str(docs))
    assert ran.code == 0, ran.err
    assert ran.out.startswith("done: 12 ingested, 0 replaced, 0 unchanged, 1 skipped (1 empty), 1 refused;"), ran.out
    assert ran.err.count("\n") == 1 and "bad\\xff.md" in ran.err and "not UTF-8" in ran.err


async def test_search_shows_matching_lines_and_the_file(tmp_path: Path) -> None:
    """A hit is its source path and the matching lines with one line around; --full prints the chunk."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    lines = [f"line {number} says nothing much" for number in range(60)]
    lines[30] = "the token rotation happens every fifteen minutes"
    (docs / "ops.md").write_text("\n".join(lines) + "\n")
    assert (await cli(data, "ingest", str(docs))).code == 0
    found = (await cli(data, "search", "rotation")).out.splitlines()
    assert found[0].startswith(f"{docs / 'ops.md'}  [doc-")
    assert found[1:4] == [
        "  line 29 says nothing much",
        "> the token rotation happens every fifteen minutes",
        "  line 31 says nothing much",
    ]
    full = (await cli(data, "search", "rotation", "--full")).out
    assert "line 0 says nothing much" in full and "line 59 says nothing much" in full


async def test_forget_asks_and_removes(tmp_path: Path) -> None:
    """forget refuses to ask without a terminal, forgets with --yes, and names an unknown id."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("about rotation\n")
    ingested = (await cli(data, "ingest", str(docs), "--json")).json()
    doc_id = ingested["ingested"][0]["doc_id"]
    refused = await cli(data, "forget", doc_id)
    assert refused.code == 2 and "--yes" in refused.err
    assert (await cli(data, "forget", "doc-nope", "--yes")).code == 2
    done = await cli(data, "forget", doc_id, "--yes")
    assert done.code == 0 and done.out.startswith(f'forgot {doc_id} "a.md" (1 chunk)'), done.out
    assert (await cli(data, "docs")).out.strip() == "no documents"


async def test_sessions_newest_last_record_first(tmp_path: Path) -> None:
    """An older session whose journal was written last (as an import does) is listed after the newer one."""
    data = tmp_path / "data"
    async with open_context(Config(data_dir=data, llm_enabled=False)) as ctx:
        await ctx.sessions.append("older", "the first thing")
        await trio.sleep(1.1)  # records carry wall-clock times; the order below is theirs
        await ctx.sessions.append("newer", "a later thing")
    later = time.time() + 60
    os.utime(data / "sessions" / "older.jsonl", (later, later))
    listed = (await cli(data, "sessions")).out.splitlines()
    assert [line.split()[0] for line in listed] == ["newer", "older"]


def test_help_puts_a_command_s_own_options_first() -> None:
    """``ctxtrio search --help``: its own options, then the settings group; the usage line is short."""
    done = subprocess.run(
        [sys.executable, "-m", "ctxtrio", "search", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=ENV,
        timeout=60,
        check=True,
    )
    text = done.stdout
    assert text.index("--full") < text.index("settings (") < text.index("--data-dir")
    usage = " ".join(line.strip() for line in text.split("\n\n", 1)[0].splitlines())
    assert usage == "usage: ctxtrio search [-h] [--doc ID] [--limit N] [--full] [--json] WORD [WORD ...] [settings]"


def test_every_argument_of_every_command_says_what_it_is() -> None:
    """Each subcommand's positionals and options carry a help line (``ctxtrio COMMAND --help`` explains them all)."""
    from ctxtrio.cli.commands import SUBCOMMANDS
    from ctxtrio.cli.run import build_parser

    silent = [
        (name, action.dest)
        for name in SUBCOMMANDS
        for action in build_parser(name)._actions
        if not action.help and action.option_strings != ["--http"]
    ]  # --http shares --stdio's line
    assert silent == []
