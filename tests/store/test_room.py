"""Journals first on a full disk (store/room.py): the derived index gives its room to the journals,
and is rebuilt from them once there is room, with no restart. On a 4 MB tmpfs, root only (as
tests/store/test_disk_full.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from mcp import Client

from ctxtrio._errors import StoreError
from ctxtrio.store.handle import IndexHealth
from ctxtrio.store.index import SearchIndex
from ctxtrio.store.index_flush import flush_index, open_index, retry_lagging
from ctxtrio.store.journal import JournalAppender
from ctxtrio.store.layout import prepare_data_dir
from ctxtrio.store.records import NewRecord, Record, StoredRecord
from ctxtrio.store.results import AppendResult
from ctxtrio.store.rows import IndexRow
from testkit.disk import fill_disk, free_bytes
from testkit.results import text_of
from testkit.servers import server_params
from tests.docs.conftest import opened
from tests.store.test_disk_full import small_tmpfs

TEXT = "\n\n".join(f"Paragraph {n} mentions the quokka number {n} and nothing else of note." for n in range(400))


def _text_rows(record: Record) -> list[IndexRow]:
    """A record's ``text`` as one row (what a domain's rows_for gives the index to rebuild from)."""
    text = record.get("text")
    return [IndexRow("chunks", str(record["seq"]), text)] if isinstance(text, str) else []


def test_an_index_update_without_room_gives_the_disk_back_and_the_index_returns_with_room(tmp_path: Path) -> None:
    """An index flush that finds no room (~4 MB of rows, 0.5 MB free) shelves the index: its files
    are deleted, so the write-ahead log the rolled-back update grew does not keep the disk full, and
    searches say why. Once there is room, what a search asks (retry_lagging) rebuilds it from the
    journals. Before, the flush was deferred and the log kept the room it had grown to."""
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        data = prepare_data_dir(mount / "data")
        small = data.docs / "small" / "1.jsonl"
        appender = JournalAppender(lock_timeout_s=5.0, folders_in=[data.docs])
        appender.append(small, [NewRecord("chunk", {"text": "the echidna lays eggs"})])
        appender.close()
        index = SearchIndex(data.index_path, _text_rows)
        index.open()
        health = IndexHealth()
        try:
            index.catch_up("docs/small/1.jsonl", small, small.stat().st_size)
            assert [hit.journal for hit in index.search("chunks", ["echidna"], journals=None, limit=5)] == [
                "docs/small/1.jsonl"
            ]
            fill_disk(mount / "filler", leave_bytes=500_000)
            before = free_bytes(mount)
            records = [StoredRecord(100 * n, 100 * n + 100, {"seq": n}) for n in range(100_000)]
            rows = {
                100 * n: [IndexRow("chunks", str(n), f"platypus{n} counted{n} on day{n} of {n}")]
                for n in range(100_000)
            }
            big = data.docs / "big" / "1.jsonl"  # (not on the disk: the rows alone are too many)
            flush_index(data, index, [("docs/big/1.jsonl", big, _appended(big, records), rows)], health)
            assert (health.shelved, health.shelves) == (True, 1)
            assert not data.index_path.exists() and not Path(f"{data.index_path}-wal").exists()
            assert free_bytes(mount) >= before  # all the index held is free again, none left in a log
            with pytest.raises(StoreError, match="search index was set aside"):
                index.search("chunks", ["echidna"], journals=None, limit=5)
            retry_lagging(data, index, health)  # still no room to rebuild in: it stays shelved
            assert (health.shelved, data.index_path.exists()) == (True, False)
            (mount / "filler").unlink()
            retry_lagging(data, index, health)
            assert (health.shelved, health.heals) == (False, 1)
            assert [hit.journal for hit in index.search("chunks", ["echidna"], journals=None, limit=5)] == [
                "docs/small/1.jsonl"
            ]
        finally:
            index.close()


def _appended(path: Path, records: list[StoredRecord]) -> AppendResult:
    """What the writer's append of ``records`` to ``path`` returned."""
    return AppendResult(path, records, records[0].offset, records[-1].end, [])


async def test_a_journal_write_without_room_takes_the_room_of_the_index(tmp_path: Path) -> None:
    """On a disk filled to the last byte, a session append takes the room of the derived index
    (its files deleted) instead of failing; searches say the index is set aside; once the disk
    has room again, the next search rebuilds it from the journals and finds the document, with
    no restart. Before, the append failed with "No space left on device"."""
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        async with opened(mount) as ctx:
            await ctx.documents.ingest(text=TEXT, title="q")
            await ctx.sessions.append("s", "the first entry")
            assert (await ctx.documents.search("quokka", budget_tokens=4000)).hits
            fill_disk(mount / "filler")
            await ctx.sessions.append("s", "an entry written on a full disk " * 400)
            assert ctx.store.health.shelved and not (mount / "data" / "index.sqlite3").exists()
            with pytest.raises(StoreError, match="search index was set aside"):
                await ctx.documents.search("quokka", budget_tokens=4000)
            (mount / "filler").unlink()
            assert (await ctx.documents.search("quokka", budget_tokens=4000)).hits
            assert (ctx.store.health.shelved, ctx.store.health.heals) == (False, 1)
            assert "an entry written on a full disk" in (mount / "data" / "sessions" / "s.jsonl").read_text()


async def test_an_index_a_full_disk_kept_from_opening_at_startup_comes_back_once_there_is_room(tmp_path: Path) -> None:
    """A server started on a disk filled to the last byte cannot open the search index (no room for
    its shared-memory file); with no journal write after, search says the disk has no room (not
    "until a restart"), sessions answer, and once the filler is removed the next doc_search finds
    the document with no restart. Before, search stayed off until a restart."""
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        data = mount / "data"
        async with opened(mount) as ctx:
            await ctx.documents.ingest(text=TEXT, title="q")
            await ctx.sessions.append("s", "the wombat entry")
        fill_disk(mount / "filler")
        with trio.fail_after(60):
            async with Client(server_params(data, cache=tmp_path / "cache")) as client:
                searched = await client.call_tool("doc_search", {"query": "quokka"})
                said = text_of(searched)
                assert searched.is_error and "no room" in said and "restart" not in said, said
                recalled = await client.call_tool("context_recall", {"session_id": "s", "query": "wombat"})
                assert not recalled.is_error and "the wombat entry" in text_of(recalled)
                (mount / "filler").unlink()
                searched = await client.call_tool("doc_search", {"query": "quokka"})
                assert not searched.is_error and "quokka" in text_of(searched), text_of(searched)


def test_only_a_disk_without_room_shelves_an_index_that_cannot_be_opened(tmp_path: Path) -> None:
    """On a disk filled to the last byte, an index that cannot be created (SQLITE_FULL) is shelved
    at startup, and rebuilt by the next retry once there is room; a directory in the index's place
    on the same full disk stays "cannot be opened ... until a restart", never shelved (W3)."""
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        data = prepare_data_dir(mount / "data")
        fill_disk(mount / "filler")
        index, health = SearchIndex(data.index_path, _text_rows), IndexHealth()
        try:
            open_index(data, index, health)
            assert (health.shelved, health.shelves) == (True, 1) and "no room" in index.unavailable
            (mount / "filler").unlink()
            retry_lagging(data, index, health)
            assert (health.shelved, health.heals, index.unavailable) == (False, 1, "")
        finally:
            index.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{data.index_path}{suffix}").unlink(missing_ok=True)
        data.index_path.mkdir()
        fill_disk(mount / "filler")
        blocked, health = SearchIndex(data.index_path, _text_rows), IndexHealth()
        open_index(data, blocked, health)
        assert not health.shelved and "cannot be opened" in blocked.unavailable and "restart" in blocked.unavailable
        assert data.index_path.is_dir()
