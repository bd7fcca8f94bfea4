"""The commands that only read (sessions, show, export, docs, search) read a data dir this user cannot
write, and the session readers neither open the index of one they can nor wait for its lock. (They
still refresh the sessions' derived summary caches where sessions/ can be written, as a server does.)"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from functools import partial
from typing import TYPE_CHECKING

import pytest
import trio

import ctxtrio
from ctxtrio.cli import library
from testkit.processes import read_line

from .runner import ROOT, Ran, cli, command

if TYPE_CHECKING:
    from pathlib import Path

DOC = "# Deploys\n\nThe deploy runs at noon.\n"
READS = [("sessions",), ("show", "work"), ("export", "--all"), ("docs",), ("search", "noon")]


async def _filled(data: Path) -> None:
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        await ctx.sessions.append("work", "cookies stay", pinned=True)
        await ctx.documents.ingest(text=DOC, title="deploys")


def _paths(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def _said(ran: Ran, *reads: str) -> None:
    """What each read must print: the session, its entry, its record, the document, the match."""
    expected = {
        "sessions": '"work"',
        "show": "[note pinned] cookies stay",
        "export": '"text": "cookies stay"',
        "docs": '"deploys"  inline',
        "search": "> The deploy runs at noon.",
    }
    assert ran.code == 0, (reads, ran.out, ran.err)
    assert expected[reads[0]] in ran.out, (reads, ran.out)


async def test_session_readers_leave_the_data_dir_as_it_was(tmp_path: Path) -> None:
    """Without an index file and a quarantine/ folder: sessions, show and export create neither (they
    opened the store for writing: a probe file, the folders, the index), and say what is stored."""
    data = tmp_path / "data"
    await _filled(data)
    assert (await cli(data, "sessions")).code == 0  # the session's derived summary cache, written once
    (data / "index.sqlite3").unlink()
    shutil.rmtree(data / "quarantine")
    before = _paths(data)
    for reads in READS[:3]:
        _said(await cli(data, *reads), *reads)
    assert _paths(data) == before


#: Holds the index's write lock (as a server writing it does) until stdin closes.
HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("ready", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


async def test_session_readers_beside_a_writer_of_the_index_do_not_wait_for_it(tmp_path: Path) -> None:
    """Another process holds the index's write lock: sessions, show and export answer without opening
    the index (opened for writing, it waited for the lock and warned that documents cannot be searched)."""
    data = tmp_path / "data"
    await _filled(data)
    holder = await trio.lowlevel.open_process(
        [sys.executable, "-c", HOLDER, str(data / "index.sqlite3")], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert await read_line(holder.stdout) == b"ready\n"
        for reads in READS[:3]:
            ran = await cli(data, *reads)
            _said(ran, *reads)
            assert "search index" not in ran.err, ran.err
    finally:
        await holder.stdin.aclose()
        with trio.fail_after(30):
            await holder.wait()
    assert holder.returncode == 0


def _unwritable(root: Path) -> list[str]:
    """``root`` made read-only for the test's user, and the prefix that runs a command as a user
    bound by it (root ignores file modes: it runs without the capabilities that let it)."""
    for folder, _, names in os.walk(root):
        for name in [*names, ""]:
            path = os.path.join(folder, name)
            os.chmod(path, os.stat(path).st_mode & ~0o222)
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a data dir unwritable to the test")
    caps = "-dac_override,-dac_read_search,-fowner"
    return [setpriv, "--inh-caps=-all", "--ambient-caps=-all", f"--bounding-set={caps}", "--"]


def _writable(root: Path) -> None:
    """Undo :func:`_unwritable` (pytest removes the folder)."""
    for folder, _, names in os.walk(root):
        for name in [*names, ""]:
            os.chmod(os.path.join(folder, name), 0o700)


def _run_as(prefix: list[str], data: Path, *args: str) -> Ran:
    """``ctxtrio ARGS`` on ``data`` as the user ``prefix`` makes (:func:`_unwritable`)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [*prefix, *command(data, *args)], capture_output=True, text=True, cwd=ROOT, env=env, timeout=60, check=False
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def test_every_reader_reads_a_data_dir_it_cannot_write(tmp_path: Path) -> None:
    """No write permission on the data dir and its files: each reader says what is stored (they refused:
    'data dir ... is not usable: Permission denied'), nothing is created, and a command that writes refuses."""
    data = tmp_path / "data"
    trio.run(_filled, data)
    prefix = _unwritable(data)
    before = _paths(data)
    run = partial(_run_as, prefix, data)

    try:
        for reads in READS:
            _said(run(*reads), *reads)
        refused = run("import", "-")
        assert refused.code == 2 and "is not usable" in refused.err, refused.err
        assert _paths(data) == before
    finally:
        _writable(data)


def test_which_commands_open_the_store_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Session readers: an existing data dir, always; document readers only where it cannot be written;
    a missing data dir never (it is created, as before); doctor unless --repair; writers never."""
    args = argparse.Namespace(repair=False)
    missing, there = tmp_path / "missing", tmp_path / "there"
    there.mkdir()
    assert library.opens_read_only("sessions", args, there)
    assert not library.opens_read_only("sessions", args, missing)
    assert not library.opens_read_only("docs", args, there)
    assert library.opens_read_only("doctor", args, missing)
    assert not library.opens_read_only("doctor", argparse.Namespace(repair=True), there)
    monkeypatch.setattr(library, "not_writable", lambda root: "a read-only file system")
    assert library.opens_read_only("search", args, there)
    assert not library.opens_read_only("search", args, missing)
    assert not library.opens_read_only("import", args, there)
    assert not library.opens_read_only("delete", args, there)


async def _index_behind(data: Path, *, missing: bool) -> None:
    """Two documents, the index holding the first only (the file as it was before the second: an index
    update deferred by a lock, then the process gone) or missing; and a generation no record commits,
    two hours old (a crash mid-ingest), which a start sets aside in lost-and-found/."""
    await _filled(data)
    kept = {path.name: path.read_bytes() for path in data.glob("index.sqlite3*")}
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        backups = await ctx.documents.ingest(text="# Backups\n\nThe backup runs at midnight.\n", title="backups")
    for path in data.glob("index.sqlite3*"):
        path.unlink()
    for name, content in {} if missing else kept.items():
        (data / name).write_bytes(content)
    orphan = data / "docs" / backups.doc.doc_id / "0123456789abcdef.jsonl"
    orphan.write_text('{"kind": "chunk"}\n')
    os.utime(orphan, (1_000_000_000, 1_000_000_000))


@pytest.mark.parametrize("missing", [False, True], ids=["index-behind", "index-missing"])
def test_document_readers_of_a_data_dir_they_cannot_write_whose_index_lags(tmp_path: Path, missing: bool) -> None:
    """docs lists every document and search searches what the index holds, saying which documents it
    lacks (both failed: 'this catch_up of <gen>.jsonl was not done', and the set-aside of the orphan);
    nothing is created, moved or removed."""
    data = tmp_path / "data"
    trio.run(partial(_index_behind, data, missing=missing))
    prefix = _unwritable(data)
    before = _paths(data)
    run = partial(_run_as, prefix, data)

    try:
        listed = run("docs")
        assert listed.code == 0 and '"deploys"' in listed.out and '"backups"' in listed.out, listed
        backups = next(line.split()[0] for line in listed.out.splitlines() if '"backups"' in line)
        deploys = next(line.split()[0] for line in listed.out.splitlines() if '"deploys"' in line)
        found = run("search", "noon")
        assert found.code == 0, found
        assert ("no match" in found.out) if missing else ("> The deploy runs at noon." in found.out), found
        lacking = run("search", "midnight")
        assert lacking.code == 0 and "backup runs" not in lacking.out, lacking
        for ran in (found, lacking):
            assert backups in ran.err and "doctor --repair" in ran.err, ran.err
            assert (deploys in ran.err) == missing, ran.err
        assert _paths(data) == before
    finally:
        _writable(data)


def test_search_of_a_data_dir_it_cannot_write_whose_index_is_damaged_says_so(tmp_path: Path) -> None:
    """A damaged index in a data dir this user cannot write: docs lists, search says the index is damaged and
    who rebuilds it, in one line (it logged 'healing it', then failed 'this heal of index.sqlite3 was not
    done'), and nothing is changed."""
    data = tmp_path / "data"
    trio.run(_filled, data)
    index = data / "index.sqlite3"
    index.write_bytes(b"not a database at all" + index.read_bytes()[21:])
    prefix = _unwritable(data)
    before = _paths(data)
    run = partial(_run_as, prefix, data)
    try:
        _said(run("docs"), "docs")
        found = run("search", "noon")
        assert found.code == 1 and "healing" not in found.err and found.err.count("\n") == 1, found
        assert "is damaged" in found.err and "doctor --repair rebuilds it" in found.err, found.err
        assert _paths(data) == before
    finally:
        _writable(data)
