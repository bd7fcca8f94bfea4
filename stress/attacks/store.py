"""Store, documents and sandbox attacks on the real server (issue 11: D1, C2, W1-W4, S1, S2, and more).

Every attack drives ``python -m ctxtrio`` over stdio with the SDK client (or the CLI
alone), damages the data dir between or during runs, and checks what the server says
and what is left on disk. Each spawn is bounded (60 s); nothing leaves loopback.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import trio

from testkit.results import text_of
from testkit.servers import server_command

from . import Row, guarded
from . import stdio_server as _server

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp import Client

ROOT = Path(__file__).resolve().parents[2]
TEXT = "# Notes\n\n" + "\n\n".join(f"Paragraph {n} is about the quoll number {n}." for n in range(600))
ORPHAN_AGE_S = 3600.0


async def _call(client: Client, tool: str, **arguments: object) -> tuple[bool, str]:
    result = await client.call_tool(tool, arguments)
    return not result.is_error, text_of(result)


async def _ingest_stop_age(work: Path, name: str) -> tuple[Path, Path, bytes]:
    data = work / name
    async with _server(data) as client:
        ok, said = await _call(client, "doc_ingest", text=TEXT, doc_id="q")
        assert ok, said
    [gen] = (data / "docs" / "q").glob("*.jsonl")
    stamp = time.time() - ORPHAN_AGE_S - 60
    os.utime(gen, (stamp, stamp))
    return data, gen, gen.read_bytes()


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


async def _searchable(client: Client, query: str = "quoll") -> tuple[bool, str]:
    ok, said = await _call(client, "doc_search", query=query)
    return ok and query in said, said[:120]


async def index_header(work: Path) -> Row:
    data, _, _ = await _ingest_stop_age(work, "c2")
    with open(data / "index.sqlite3", "r+b") as handle:
        handle.write(b"\xff" * 100)
    async with _server(data) as client:
        found, said = await _searchable(client)
    return Row(
        "C2 index.sqlite3 header overwritten while stopped",
        "rebuilt at start; search finds the document",
        "found" if found else f"not found: {said}",
        found,
    )


async def index_deep(work: Path) -> Row:
    data, _, _ = await _ingest_stop_age(work, "w1b")
    index = data / "index.sqlite3"
    size = index.stat().st_size
    with open(index, "r+b") as handle:
        handle.seek(4096)
        handle.write(os.urandom(max(0, size - 4096)))
    async with _server(data) as client:
        found, said = await _searchable(client)
        ok, _ = await _call(client, "doc_ingest", text="The dunnart is small.", doc_id="d")
        again, _ = await _searchable(client, "dunnart")
    held = found and ok and again
    return Row(
        "W1 index corrupt past its first page while stopped",
        "healed on first search; old and new found",
        f"old {'found' if found else 'missing'}, new {'found' if again else 'missing'}",
        held,
    )


async def index_deleted(work: Path) -> Row:
    data = work / "w1c"
    async with _server(data) as client:
        await _call(client, "doc_ingest", text=TEXT, doc_id="q")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{data / 'index.sqlite3'}{suffix}").unlink(missing_ok=True)
        ok, said = await _call(client, "doc_ingest", text="The dunnart is small.", doc_id="d")
        new, _ = await _searchable(client, "dunnart")
        old, _ = await _searchable(client)
    return Row(
        "W1 index.sqlite3 deleted while the server runs",
        "recreated; old and new documents found",
        f"ingest {'ok' if ok else said[:60]}, new {'found' if new else 'missing'}, old {'found' if old else 'missing'}",
        ok and new and old,
    )


_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


async def index_locked(work: Path) -> Row:
    data = work / "w1a"
    hold_s = 35.0
    async with _server(data) as client:
        await _call(client, "doc_ingest", text="warm up", doc_id="w")
        holder = await trio.lowlevel.open_process(
            [sys.executable, "-c", _HOLDER, str(data / "index.sqlite3"), str(hold_s)], stdout=subprocess.PIPE
        )
        assert holder.stdout is not None
        try:
            with trio.fail_after(hold_s + 30):
                await holder.stdout.receive_some()
                started = trio.current_time()
                ingested, _ = await _call(client, "doc_ingest", text=TEXT, doc_id="q")
                ingest_s = trio.current_time() - started
                during_ok, during = await _call(client, "doc_search", query="quoll")
                honest = (not during_ok and "locked by another process" in during) or "quoll" in during
                await holder.wait()
                after, _ = await _searchable(client)
        finally:
            if holder.returncode is None:
                holder.kill()
                await holder.wait()
            await holder.stdout.aclose()
    return Row(
        f"W1 another process holds the index write lock {hold_s:g} s during doc_ingest",
        "ingest acknowledged; search says locked (never 0 hits silently); found after release",
        f"ingested in {ingest_s:.1f} s; during: {'says locked' if not during_ok else 'hits'}; "
        f"after: {'found' if after else 'missing'}",
        ingested and honest and after,
    )


async def _compact_round(a: Client, b: Client, session: str) -> int:
    for n in range(12):
        await _call(a, "context_append", session_id=session, text=f"Step {n}: tried option {n}, code {n * 3}.")
    succeeded = [0]

    async def compact(client: Client) -> None:
        ok, said = await _call(client, "context_compact", session_id=session, keep_recent=2)
        if ok and "nothing to fold" not in said:
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


@contextmanager
def _tmpfs(where: Path, size: str) -> Iterator[bool]:
    where.mkdir(parents=True, exist_ok=True)
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, check=False
        ).returncode
    ):
        yield False
        return
    try:
        yield True
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


async def disk_full(work: Path) -> Row:
    with _tmpfs(work / "w3-mnt", "4m") as mounted:
        if not mounted:
            return Row(
                "W3 disk full during doc_ingest",
                '"No space left on device"',
                "not run: needs root to mount a tmpfs",
                False,
            )
        big = "\n\n".join(f"Paragraph {n}: the platypus count was {n} on that day." for n in range(110_000))
        async with _server(work / "w3-mnt" / "data") as client:
            ok, said = await _call(client, "doc_ingest", text=big, title="big")
            after, _ = await _call(client, "doc_ingest", text="The echidna lays eggs.", doc_id="e")
    clear = not ok and "No space left on device" in said
    return Row(
        "W3 disk full during doc_ingest (6 MB onto a 4 MB tmpfs)",
        '"No space left on device"; serves on',
        f"...{said[-60:]!r}; small ingest after: {'ok' if after else 'failed'}",
        clear and after,
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


def _cli(data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        server_command(data, audit=True),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(data.parent / "cache")},
    )


def unusable_index(work: Path) -> Row:
    data = work / "w3d"
    (data / "index.sqlite3").mkdir(parents=True)
    done = _cli(data)
    warnings = [line for line in done.stderr.splitlines() if "WARNING" in line]
    said = len(warnings) == 1 and "search index" in warnings[0] and "cannot be opened" in warnings[0]
    # Since issue 27 (a full disk degrades to read-only) an index that cannot be opened only
    # turns document search off, saying why once; sessions need no index, so the server serves.
    return Row(
        "W3 index.sqlite3 is a directory (unusable index)",
        "one warning naming the index; serves on, exit 0 at EOF",
        f"exit {done.returncode}, {len(warnings)} warning(s), names the index: {said}",
        done.returncode == 0 and said and "Traceback" not in done.stderr,
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


async def empty_index_file(work: Path) -> Row:
    data, _, _ = await _ingest_stop_age(work, "empty")
    (data / "index.sqlite3").write_bytes(b"")
    for suffix in ("-wal", "-shm"):
        Path(f"{data / 'index.sqlite3'}{suffix}").unlink(missing_ok=True)
    async with _server(data) as client:
        found, said = await _searchable(client)
    return Row(
        "index.sqlite3 emptied (0 bytes) while stopped",
        "index rebuilt; document found",
        "found" if found else said,
        found,
    )


async def foreign_index_schema(work: Path) -> Row:
    data, _, _ = await _ingest_stop_age(work, "schema")
    index = data / "index.sqlite3"
    conn = sqlite3.connect(index)
    conn.execute("DROP TABLE chunks")
    conn.commit()
    conn.close()
    async with _server(data) as client:
        found, said = await _searchable(client)
    return Row(
        "index's chunks table dropped while stopped", "healed; document found", "found" if found else said, found
    )


async def _main(work: Path) -> list[Row]:
    rows: list[Row] = []
    attacks: list[tuple[str, Callable[[], Awaitable[Row | list[Row]]]]] = [
        ("D1 damaged line", lambda: catalog_damaged(work, "commit line damaged")),
        ("D1 cut back", lambda: catalog_damaged(work, "cut back")),
        ("C2", lambda: index_header(work)),
        ("W1 deep", lambda: index_deep(work)),
        ("W1 deleted", lambda: index_deleted(work)),
        ("W1 locked", lambda: index_locked(work)),
        ("W2", lambda: compact_race(work)),
        ("W3 disk full", lambda: disk_full(work)),
        ("W3 forget during search", lambda: forget_during_search(work)),
        ("W4", lambda: forget_read_only(work)),
        ("S1 S2 FIFO", lambda: sandbox(work)),
        ("session damage", lambda: damaged_session(work)),
        ("truncated generation", lambda: truncated_generation(work)),
        ("empty index", lambda: empty_index_file(work)),
        ("dropped table", lambda: foreign_index_schema(work)),
    ]
    for name, attack in attacks:
        rows.extend(await guarded(name, attack, 180))
    return rows


def run(work: Path) -> list[Row]:
    rows = trio.run(_main, work)
    rows.append(library_not_found(work))
    rows.append(unusable_index(work))
    rows.append(data_dir_is_file(work))
    return rows
