"""The search index heals itself from the journals, with no restart (issue 11: C2, W1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from ctxtrio._errors import StoreError
from tests.docs.conftest import opened

TEXT = "\n\n".join(f"Paragraph {n} mentions the quokka number {n} and nothing else of note." for n in range(400))

# The index is an ordinary SQLite database. Its first 16 bytes are the header string
# "SQLite format 3\0", without which SQLite reports SQLITE_NOTADB ("file is not a
# database"); pages past the first hold the tables, and garbage there is reported as
# SQLITE_CORRUPT ("database disk image is malformed") when a query reaches it
# (https://www.sqlite.org/fileformat.html, https://www.sqlite.org/rescode.html).


async def _hits(ctx: object, query: str = "quokka") -> int:
    from ctxtrio._wiring import Wiring

    assert isinstance(ctx, Wiring)
    return len((await ctx.documents.search(query, budget_tokens=4000)).hits)


async def test_corrupt_header_rebuilt_at_start(tmp_path: Path) -> None:
    """C2: an index whose header was overwritten while stopped is rebuilt at start; search finds the document."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=TEXT, title="q")
    index = tmp_path / "data" / "index.sqlite3"
    with open(index, "r+b") as handle:
        handle.write(b"\xff" * 100)
    async with opened(tmp_path) as ctx:
        assert await _hits(ctx) > 0


async def test_corrupt_deep_inside_healed_while_running(tmp_path: Path) -> None:
    """W1: garbage past the first page is found by a search, which rebuilds the index and still answers."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=TEXT, title="q")
    index = tmp_path / "data" / "index.sqlite3"
    size = index.stat().st_size
    assert size > 3 * 4096
    with open(index, "r+b") as handle:
        handle.seek(4096)
        handle.write(os.urandom(size - 4096))
    async with opened(tmp_path) as ctx:
        assert await _hits(ctx) > 0
        assert ctx.store.health.heals == 1
        await ctx.documents.ingest(text="A wombat paragraph.\n\nAnother wombat.", title="w")
        assert await _hits(ctx, "wombat") > 0


async def test_index_deleted_while_running(tmp_path: Path) -> None:
    """W1: the index file deleted under a running process is recreated; old and new documents are found."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=TEXT, title="q")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{tmp_path / 'data' / 'index.sqlite3'}{suffix}").unlink(missing_ok=True)
        await ctx.documents.ingest(text="A wombat paragraph.\n\nAnother wombat.", title="w")
        assert await _hits(ctx, "wombat") > 0
        assert await _hits(ctx) > 0


async def test_index_deleted_before_a_search_that_counts_its_words(tmp_path: Path) -> None:
    """W1: a search whose plain word is expanded counts its words' rows before it searches; with the
    index file deleted under the process, the count heals it too (it raised IndexDamagedError)."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text="The backup directory holds one file per day.", title="d")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{tmp_path / 'data' / 'index.sqlite3'}{suffix}").unlink(missing_ok=True)
        assert await _hits(ctx, "the folder") > 0  # folder: in no row; its neighbour directory is


_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()  # until the test says so (or closes stdin)
conn.execute("COMMIT")
"""


async def test_index_write_lock_held_by_another_process(tmp_path: Path) -> None:
    """W1: while another process holds the index's write lock, an ingest is acknowledged and a search
    says the index is locked (never 0 hits); once released, the same search finds the document."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text="warm up the index file", title="w")
        holder = await trio.lowlevel.open_process(
            [sys.executable, "-c", _HOLDER, str(tmp_path / "data" / "index.sqlite3")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert holder.stdin is not None and holder.stdout is not None
        try:
            with trio.fail_after(60):  # the holder never holds longer than the test waits
                assert b"locked" in await holder.stdout.receive_some()
                result = await ctx.documents.ingest(text=TEXT, title="q")
                assert result.doc.chunks > 0
                with pytest.raises(StoreError, match="locked by another process"):
                    await _hits(ctx)
                await holder.stdin.send_all(b"release\n")
                await holder.wait()
                assert await _hits(ctx) > 0
                assert not ctx.store.health.lagging
        finally:
            if holder.returncode is None:
                holder.kill()
                await holder.wait()
            await holder.stdin.aclose()
            await holder.stdout.aclose()
