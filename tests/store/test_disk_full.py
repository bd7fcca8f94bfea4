"""A full disk during doc_ingest: the model reads "No space left on device" and the server serves on (issue 11: W3)."""

from __future__ import annotations

import contextlib
import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio
from mcp import Client

import ctxtrio
from ctxtrio._config import Config
from ctxtrio.store.handle import IndexHealth
from ctxtrio.store.index import Forget, IndexFullError, SearchIndex
from ctxtrio.store.index_flush import flush_index
from ctxtrio.store.layout import prepare_data_dir
from ctxtrio.store.records import StoredRecord
from ctxtrio.store.rows import IndexRow
from testkit import disk
from testkit.results import text_of
from testkit.servers import server_params

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` at ``where`` (:func:`testkit.disk.small_tmpfs`): writes past it fail
    with ENOSPC, as on a full disk. Where it cannot be mounted (not root), the test is skipped."""
    with disk.small_tmpfs(where, size) as failed:
        if failed is not None:
            pytest.skip(failed)
        yield where


async def test_disk_full_during_doc_ingest_is_reported_as_such(tmp_path: Path) -> None:
    """doc_ingest of 6 MB onto a 4 MB disk says "No space left on device" (not an internal
    ExceptionGroup error); a small ingest afterwards succeeds and is searchable."""
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        params = server_params(mount / "data", cache=tmp_path / "cache")
        big = "\n\n".join(f"Paragraph {n}: the platypus count was {n} on that day." for n in range(110_000))
        assert len(big) > 6_000_000
        with trio.fail_after(120):
            async with Client(params) as client:
                failed = await client.call_tool("doc_ingest", {"text": big, "title": "big"})
                assert failed.is_error
                assert "No space left on device" in text_of(failed)
                assert "internal error" not in text_of(failed)
                small = await client.call_tool("doc_ingest", {"text": "The echidna lays eggs.", "doc_id": "e"})
                assert not small.is_error, text_of(small)
                found = await client.call_tool("doc_search", {"query": "echidna"})
                assert not found.is_error and "echidna" in text_of(found)


def _big_rows(count: int) -> tuple[list[StoredRecord], dict[int, list[IndexRow]]]:
    """``count`` records of a journal (fake ranges of 100 bytes), each with one row of ~40 characters of unique words."""
    records = [StoredRecord(100 * n, 100 * n + 100, {"seq": n}) for n in range(count)]
    return records, {
        100 * n: [IndexRow("chunks", str(n), f"platypus{n} counted{n} on day{n} of {n}")] for n in range(count)
    }


def test_rows_a_flush_also_forgets_are_never_written_so_a_full_disk_keeps_its_room(tmp_path: Path) -> None:
    """The index flush after a failed ingest can hold both the appends of the generation and
    the removal of its file (the writer acknowledged them all before the indexer ran, as under
    CPU load). Rows the removal deletes in the same transaction are not inserted: on a 4 MB
    disk without room for ~6 MB of them, the flush succeeds and the disk keeps its room. Before,
    inserting them filled the disk with the WAL (kept at its size after the rollback), the
    flush failed and was deferred, and the next ingest read "No space left on device"."""
    journal, count = "docs/big/1.jsonl", 100_000
    records, rows = _big_rows(count)
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        index = SearchIndex(mount / "index.sqlite3")
        index.open()
        try:
            index.index_batch([(journal, mount / "gone.jsonl", records, 100 * count, rows), Forget(journal)])
            assert index.inventory() == {}
        finally:
            index.close()
        room = os.statvfs(mount)
        assert room.f_bavail * room.f_frsize > 3_000_000


def test_an_index_update_without_room_says_the_disk_is_full(tmp_path: Path) -> None:
    """SQLite rolls a transaction back by itself on SQLITE_FULL: the update says the disk is full
    (IndexFullError, which flush_index acts on), not that the ROLLBACK after it found no transaction."""
    records, rows = _big_rows(100_000)
    assert sum(len(found[0].terms) for found in rows.values()) > 4_000_000
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        index = SearchIndex(mount / "index.sqlite3")
        index.open()
        try:
            with pytest.raises(IndexFullError, match="database or disk is full"):
                index.index_batch([("docs/big/1.jsonl", mount / "gone.jsonl", records, 100 * len(records), rows)])
            assert index.inventory() == {}
        finally:
            index.close()


def test_rows_of_a_removed_journal_on_a_full_disk_are_dropped_with_the_index_at_once(tmp_path: Path) -> None:
    """Forgetting the indexed rows of a removed journal needs room a full disk lacks: the flush
    drops the index and rebuilds it from the journals left, at once, so the room they held is
    free when the flush returns (what a failed ingest waits for before it reports). Before, the
    removal was deferred like a busy lock's, and the disk stayed full until a later flush."""
    journal = "docs/big/1.jsonl"
    records, rows = _big_rows(20_000)
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        data = prepare_data_dir(mount / "data")
        index = SearchIndex(data.index_path)
        index.open()
        try:
            index.index_batch([(journal, data.docs / "gone.jsonl", records, 100 * len(records), rows)])
            with open(mount / "filler", "wb", buffering=0) as filler, contextlib.suppress(OSError):
                while True:
                    filler.write(b"\0" * 4096)
            health = IndexHealth()
            flush_index(data, index, [Forget(journal)], health)
            assert index.inventory() == {} and not health.unforgotten and health.heals == 1
        finally:
            index.close()
        room = os.statvfs(mount)
        assert room.f_bavail * room.f_frsize > 500_000


async def test_a_full_disk_at_startup_leaves_every_read_working(tmp_path: Path) -> None:
    """Data dir on a disk filled to the last byte: sessions, show, export and doctor answer, a server
    serves reads (before: every command failed opening the index). An append takes the room of the
    derived index (search then says why it is off); once that room is used up too, an append says
    "No space left on device"; once the disk has room again, search works with no restart."""
    from tests.cli.runner import cli

    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        data = mount / "data"
        async with ctxtrio.open_context(Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
            for number in range(5):
                await ctx.sessions.append("s", f"kept entry {number}")
            await ctx.documents.ingest(text="# Doc\n\nabout the echidna\n", title="d")
        with open(mount / "filler", "wb") as filler:
            with contextlib.suppress(OSError):
                while True:
                    filler.write(b"\0" * 65536)
        listed = await cli(data, "sessions")
        assert listed.code == 0 and "5 live" in listed.out, listed.err
        shown = await cli(data, "show", "s")
        assert shown.code == 0 and "kept entry 4" in shown.out, shown.err
        exported = await cli(data, "export", "s")
        assert exported.code == 0 and exported.out.count("\n") == 7, exported.err
        doctor = await cli(data, "doctor")
        assert doctor.code == 1 and "BAD data dir" in doctor.out and "the disk is full" in doctor.out, doctor.out
        assert "ok  sessions: 1 (0 deleted), 6 records" in doctor.out, doctor.out
        params = server_params(data, cache=tmp_path / "cache")
        with trio.fail_after(60):
            async with Client(params) as client:
                recalled = await client.call_tool("context_recall", {"session_id": "s", "query": "kept entry"})
                assert not recalled.is_error and "kept entry 4" in text_of(recalled)
                appended = await client.call_tool("context_append", {"session_id": "s", "text": "x " * 5000})
                assert not appended.is_error, text_of(appended)  # in the index's room: journals come first
                assert not (data / "index.sqlite3").exists()
                searched = await client.call_tool("doc_search", {"query": "echidna"})
                assert searched.is_error and "search index was set aside" in text_of(searched), text_of(searched)
                for number in range(100):  # the index's room is some 10 KB appends
                    text = f"entry {number} " + "x " * 5000
                    appended = await client.call_tool("context_append", {"session_id": "s", "text": text})
                    if appended.is_error:
                        break
                assert appended.is_error and "No space left on device" in text_of(appended), text_of(appended)
                free = "ask the user to free space on the data dir's disk, then call context_append again"
                assert free in text_of(appended), text_of(appended)  # what to do, not only the errno
                (mount / "filler").unlink()
                searched = await client.call_tool("doc_search", {"query": "echidna"})
                assert not searched.is_error and "echidna" in text_of(searched), text_of(searched)
