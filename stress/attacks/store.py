"""Store, documents and sandbox attacks on the real server (issue 11: D1, W2-W4, S1, S2, and more).

Every attack drives ``python -m ctxtrio`` over stdio with the SDK client (or the CLI
alone), damages the data dir between or during runs, and checks what the server says
and what is left on disk. Each spawn is bounded (60 s); nothing leaves loopback. The
search index's own attacks are the index area's, a full disk the room area's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import trio

from . import Row, guarded
from . import stdio_server as _server
from ._store_kit import ROOT, TEXT
from ._store_kit import call as _call
from ._store_kit import ingest_stop_age as _ingest_stop_age
from ._store_kit import run_cli as _cli
from ._store_kit import searchable as _searchable

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from mcp import Client


async def catalog_damaged(work: Path, how: str) -> Row:
    data, gen, content = await _ingest_stop_age(work, f"d1-{how.split()[0]}")
    catalog = data / "docs" / "catalog.jsonl"
    if how == "cut back":
        catalog.write_bytes(b"")
    else:
        lines = catalog.read_bytes().splitlines(keepends=True)
        catalog.write_bytes(
            b"".join(b'{"v":1,"kind":"commit" damaged\n' if b'"commit"' in line else line for line in lines)
        )
    async with _server(data) as client:
        await _call(client, "doc_list")
    kept = data / "lost-and-found" / "docs" / "q" / gen.name
    safe = kept.exists() and kept.read_bytes() == content
    return Row(
        f"D1 catalog {how}, document older than an hour, restart",
        "chunk file moved to lost-and-found, not deleted",
        "in lost-and-found, same bytes" if safe else ("still in place" if gen.exists() else "DELETED"),
        safe,
    )


async def _compact_round(a: Client, b: Client, session: str) -> int:
    for n in range(12):
        await _call(a, "context_append", session_id=session, text=f"Step {n}: tried option {n}, code {n * 3}.")
    succeeded = [0]

    async def compact(client: Client) -> None:
        ok, said = await _call(client, "context_compact", session_id=session, keep_recent=2)
        if ok and "nothing to fold" not in said.lower():
            succeeded[0] += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(compact, a)
        nursery.start_soon(compact, b)
    return succeeded[0]


async def compact_race(work: Path) -> Row:
    data = work / "w2"
    rounds = 15
    overlaps = 0
    async with _server(data) as a, _server(data) as b:
        for number in range(rounds):
            if await _compact_round(a, b, f"s{number}") > 1:
                overlaps += 1
    summaries = 0
    for journal in (data / "sessions").glob("*.jsonl"):
        summaries += journal.read_text().count('"role":"summary"')
    return Row(
        f"W2 two processes compact one session at once, {rounds} rounds",
        "one compaction per round",
        f"both succeeded in {overlaps} of {rounds}; {summaries} summaries written",
        overlaps == 0 and summaries == rounds,
    )


async def forget_during_search(work: Path) -> Row:
    data = work / "w3b"
    internal = 0
    async with _server(data) as a, _server(data) as b:
        for n in range(6):
            await _call(a, "doc_ingest", text=f"The bandicoot {n} digs.\n\nBandicoot burrows.", doc_id=f"b{n}")

        async def searcher() -> None:
            nonlocal internal
            for _ in range(40):
                ok, said = await _call(a, "doc_search", query="bandicoot")
                internal += "internal error" in said or (not ok and "ExceptionGroup" in said)

        async def forgetter() -> None:
            for n in range(6):
                await _call(b, "doc_forget", doc_id=f"b{n}")
                await _call(b, "doc_ingest", text=f"The bandicoot {n} again.", doc_id=f"b{n}")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(searcher)
            nursery.start_soon(forgetter)
    return Row(
        "W3 documents forgotten and re-ingested by another process during 40 searches",
        "no internal error",
        f"{internal} internal errors",
        internal == 0,
    )


def library_not_found(work: Path) -> Row:
    script = (
        "import trio, ctxtrio\n"
        "async def main():\n"
        f"    async with ctxtrio.open_context(ctxtrio.Config(data_dir={str(work / 'lib')!r}, llm_enabled=False)) as ctx:\n"
        "        await ctx.sessions.status('nope')\n"
        "try:\n    trio.run(main)\n"
        "except BaseException as exc:\n    print(type(exc).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    raised = done.stdout.strip()
    return Row(
        "W3 library: open_context body raises NotFoundError",
        "NotFoundError, not ExceptionGroup",
        raised or done.stderr[-80:],
        raised == "NotFoundError",
    )


def data_dir_is_file(work: Path) -> Row:
    blocker = work / "blocker"
    blocker.write_text("")
    done = _cli(blocker / "data")
    lines = done.stderr.strip().count("\n") + 1
    return Row(
        "data dir below a regular file",
        "one line on stderr, exit 2",
        f"exit {done.returncode}, {lines} line(s)",
        done.returncode == 2 and lines == 1,
    )


async def forget_read_only(work: Path) -> Row:
    data = work / "w4"
    if os.geteuid() == 0 and shutil.which("chattr") is None:
        return Row("W4 doc_forget in a read-only data dir", "refused; document intact", "not run: no chattr", False)
    async with _server(data) as client:
        await _call(client, "doc_ingest", text=TEXT, doc_id="q")
        folder = data / "docs" / "q"
        # As root, the immutable attribute stands in for chmod a-w (root ignores mode bits).
        lock = ["chattr", "+i", str(folder)] if os.geteuid() == 0 else ["chmod", "0500", str(folder)]
        unlock = ["chattr", "-i", str(folder)] if os.geteuid() == 0 else ["chmod", "0700", str(folder)]
        await trio.run_process(lock)
        try:
            ok, said = await _call(client, "doc_forget", doc_id="q")
            _, listing = await _call(client, "doc_list")
            found, _ = await _searchable(client)
        finally:
            await trio.run_process(unlock)
    intact = not ok and "q" in listing and found
    return Row(
        "W4 doc_forget with the document's folder read-only",
        "refused before the forget record; document intact",
        f"forget {'ok' if ok else 'refused'}; still listed and searchable: {intact}",
        intact,
    )


async def sandbox(work: Path) -> list[Row]:
    root = work / "root"
    root.mkdir()
    secret = work / "secret.txt"
    secret.write_text("the secret is kangaroo\n")
    os.link(secret, root / "linked.txt")
    os.mkfifo(root / "pipe")
    rows: list[Row] = []
    async with _server(work / "sandbox", "--ingest-root", str(root)) as client:
        ok, said = await _call(client, "doc_ingest", file_path="linked.txt")
        rows.append(
            Row(
                "S1 hard link inside the ingest root to a file outside",
                "refused",
                "ingested" if ok else said[:80],
                not ok and "kangaroo" not in said,
            )
        )
        answers = []
        for path in ("/etc/shadow", "/etc/nonexistent"):
            _, said = await _call(client, "doc_ingest", file_path=path)
            answers.append(said.replace(path, "PATH"))
        rows.append(
            Row(
                "S2 doc_ingest /etc/shadow vs /etc/nonexistent",
                "the same refusal",
                "same" if answers[0] == answers[1] else f"differ: {answers}",
                answers[0] == answers[1],
            )
        )
        with trio.fail_after(10):
            ok, said = await _call(client, "doc_ingest", file_path="pipe")
        rows.append(Row("FIFO inside the ingest root", "refused at once, never blocks", said[:70], not ok))
    return rows


async def damaged_session(work: Path) -> Row:
    data = work / "sess"
    async with _server(data) as client:
        for n in range(5):
            await _call(client, "context_append", session_id="s", text=f"note {n}")
    journal = data / "sessions" / "s.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(lines[0] + b"{not json at all\n" + b"".join(lines[1:]) + b'{"v":1,"kind":"entry","te')
    async with _server(data) as client:
        ok, said = await _call(client, "context_status", session_id="s")
        appended, _ = await _call(client, "context_append", session_id="s", text="after damage")
    quarantined = any((data / "quarantine").iterdir())
    return Row(
        "session journal: a garbage line in the middle and a torn final line",
        "loads; line quarantined; appends",
        f"status {'ok' if ok else said[:60]}, append {'ok' if appended else 'failed'}, quarantined {quarantined}",
        ok and appended and quarantined,
    )


async def truncated_generation(work: Path) -> Row:
    data, gen, content = await _ingest_stop_age(work, "trunc")
    gen.write_bytes(content[: len(content) // 2])
    async with _server(data) as client:
        ok, said = await _call(client, "doc_window", doc_id="q")
        listed, _ = await _call(client, "doc_list")
    clear = not ok and "internal error" not in said
    return Row(
        "current generation file cut in half while stopped",
        "a clear error naming the damage; server serves on",
        said[:90],
        clear and listed,
    )


async def _main(work: Path) -> list[Row]:
    rows: list[Row] = []
    attacks: list[tuple[str, Callable[[], Awaitable[Row | list[Row]]]]] = [
        ("D1 damaged line", lambda: catalog_damaged(work, "commit line damaged")),
        ("D1 cut back", lambda: catalog_damaged(work, "cut back")),
        ("W2", lambda: compact_race(work)),
        ("W3 forget during search", lambda: forget_during_search(work)),
        ("W4", lambda: forget_read_only(work)),
        ("S1 S2 FIFO", lambda: sandbox(work)),
        ("session damage", lambda: damaged_session(work)),
        ("truncated generation", lambda: truncated_generation(work)),
    ]
    for name, attack in attacks:
        rows.extend(await guarded(name, attack, 180))
    return rows


def run(work: Path) -> list[Row]:
    rows = trio.run(_main, work)
    rows.append(library_not_found(work))
    rows.append(data_dir_is_file(work))
    return rows
