"""Search index attacks on the real server (issue 11: C2, W1, W3): its file damaged, deleted, locked or unusable.

Every attack drives ``python -m ctxtrio`` over stdio with the SDK client (or the server
alone), damages ``index.sqlite3`` between or during runs, and checks what the server says
and finds. Each spawn is bounded (60 s); nothing leaves loopback.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from . import Row, guarded
from . import stdio_server as _server
from ._store_kit import TEXT
from ._store_kit import call as _call
from ._store_kit import ingest_stop_age as _ingest_stop_age
from ._store_kit import run_cli as _cli
from ._store_kit import searchable as _searchable

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable


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


async def _main(work: Path) -> list[Row]:
    rows: list[Row] = []
    attacks: list[tuple[str, Callable[[], Awaitable[Row | list[Row]]]]] = [
        ("C2", lambda: index_header(work)),
        ("W1 deep", lambda: index_deep(work)),
        ("W1 deleted", lambda: index_deleted(work)),
        ("W1 locked", lambda: index_locked(work)),
        ("empty index", lambda: empty_index_file(work)),
        ("dropped table", lambda: foreign_index_schema(work)),
    ]
    for name, attack in attacks:
        rows.extend(await guarded(name, attack, 180))
    return rows


def run(work: Path) -> list[Row]:
    rows = trio.run(_main, work)
    rows.append(unusable_index(work))
    return rows
