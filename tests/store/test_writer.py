"""The single store writer: ordering, group commit, backpressure, durability, drain."""

from __future__ import annotations

import fcntl
import os
import threading
from functools import partial
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from ctxtrio._errors import StoreError
from ctxtrio.docs.chunks import chunk_rows
from ctxtrio.store import journal as journal_module
from ctxtrio.store.layout import DataDir, prepare_data_dir
from ctxtrio.store.ops import ENDS_AT
from ctxtrio.store.reading import read_journal
from ctxtrio.store.records import NewRecord
from ctxtrio.store.writer import run_store_writer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from ctxtrio.store.handle import StoreHandle
    from ctxtrio.store.results import AppendResult


@pytest.fixture
def data(tmp_path: Path) -> DataDir:
    return prepare_data_dir(tmp_path / "data")


@pytest.fixture
async def store(data: DataDir) -> AsyncIterator[StoreHandle]:
    async with trio.open_nursery() as nursery:
        handle: StoreHandle = await nursery.start(
            partial(run_store_writer, data, lock_timeout_s=5.0, rows_for=chunk_rows)
        )
        yield handle
        await handle.aclose()


def _note(text: str) -> NewRecord:
    return NewRecord("entry", {"text": text}, id_prefix="e")


def _chunk(index: int, text: str) -> NewRecord:
    return NewRecord("chunk", {"index": index, "text": text})


async def test_sequential_appends_keep_order(store: StoreHandle, data: DataDir) -> None:
    """Appends awaited one after another land in that order with increasing seq."""
    path = data.session_journal("s1")
    for number in range(20):
        result = await store.append(path, [_note(f"n{number}")])
        assert result.records[0].seq == number + 1
    assert [r.data["text"] for r in read_journal(path).records] == [f"n{i}" for i in range(20)]


async def test_concurrent_appends_are_group_committed(store: StoreHandle, data: DataDir) -> None:
    """Many concurrent producers share fsyncs: fewer batches than appends, nothing lost."""
    path = data.session_journal("s1")

    async def producer(name: int) -> None:
        for number in range(10):
            await store.append(path, [_note(f"{name}-{number}")])

    async with trio.open_nursery() as nursery:
        for name in range(50):
            nursery.start_soon(producer, name)
    records = read_journal(path).records
    assert len(records) == 500
    assert [r.seq for r in records] == list(range(1, 501))
    assert store.stats.appends == 500
    assert store.stats.fsyncs < 500
    for name in range(50):  # each producer's own order is kept
        mine = [r.data["text"] for r in records if str(r.data["text"]).startswith(f"{name}-")]
        assert mine == [f"{name}-{n}" for n in range(10)]


async def test_ack_only_after_fsync(store: StoreHandle, data: DataDir, monkeypatch: pytest.MonkeyPatch) -> None:
    """An append returns only after the bytes it wrote were fsynced."""
    synced: list[int] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        real_fsync(fd)
        synced.append(os.fstat(fd).st_size)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    path = data.session_journal("s1")
    result = await store.append(path, [_note("durable")])
    assert synced and max(synced) >= result.end


async def test_backpressure_when_channel_full(data: DataDir) -> None:
    """With the writer stuck, producers beyond the channel capacity wait instead of queueing."""
    path = data.session_journal("s1")
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another "process" holds the journal lock
    done = 0
    try:
        async with trio.open_nursery() as nursery:
            store: StoreHandle = await nursery.start(
                partial(run_store_writer, data, lock_timeout_s=30.0, rows_for=chunk_rows, capacity=2)
            )

            async def producer(number: int) -> None:
                nonlocal done
                await store.append(path, [_note(str(number))])
                done += 1

            nursery.start_soon(producer, 0)
            with trio.fail_after(5):
                while store.stats.batches < 1:  # the writer has taken op 0 (and waits for the lock)
                    await trio.sleep(0.01)
            for number in range(1, 6):
                nursery.start_soon(producer, number)
            with trio.fail_after(5):
                while store._send.statistics().tasks_waiting_send < 3:  # 2 fill the channel, 3 wait
                    await trio.sleep(0.01)
            assert store._send.statistics().current_buffer_used == 2
            assert done == 0
            fcntl.flock(fd, fcntl.LOCK_UN)
            with trio.fail_after(10):
                while done < 6:
                    await trio.sleep(0.01)
            await store.aclose()
    finally:
        os.close(fd)
    assert len(read_journal(path).records) == 6


async def test_drain_on_shutdown(data: DataDir) -> None:
    """Closing the handle lets every queued append finish; all are on disk afterwards."""
    path = data.session_journal("s1")
    acked = 0
    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(
            partial(run_store_writer, data, lock_timeout_s=5.0, rows_for=chunk_rows)
        )

        async def producer(number: int) -> None:
            nonlocal acked
            await store.append(path, [_note(str(number))])
            acked += 1

        for number in range(100):
            nursery.start_soon(producer, number)
        await trio.testing.wait_all_tasks_blocked()
        await store.aclose()
    assert acked == 100
    assert len(read_journal(path).records) == 100


async def test_append_after_close_is_a_clear_error(data: DataDir) -> None:
    """Submitting after shutdown raises StoreError instead of hanging."""
    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(
            partial(run_store_writer, data, lock_timeout_s=5.0, rows_for=chunk_rows)
        )
        await store.aclose()
    with pytest.raises(StoreError, match="shutting down"):
        await store.append(data.session_journal("s1"), [_note("late")])


async def test_index_follows_appends_and_heals_gaps(store: StoreHandle, data: DataDir) -> None:
    """Appended chunks are searchable; lines written behind the index's back are caught up."""
    path = data.docs / "d.jsonl"
    await store.append(path, [_chunk(0, "the cookie decision")])
    hits = await store.search("chunks", ["cookie"], journals=["docs/d.jsonl"], limit=10)
    assert [h.item for h in hits] == ["0"]
    # Simulate a crash between journal fsync and index commit: a line the index never saw.
    journal_module.JournalAppender(lock_timeout_s=1.0).append(path, [_chunk(1, "orphan token zebra")])
    assert await store.search("chunks", ["zebra"], journals=None, limit=10) == []
    assert await store.catch_up(path) == 1
    hits = await store.search("chunks", ["zebra"], journals=None, limit=10)
    assert [h.item for h in hits] == ["1"]
    await store.append(path, [_chunk(2, "zebra again")])  # the next append does not index twice
    hits = await store.search("chunks", ["zebra"], journals=None, limit=10)
    assert sorted(h.item for h in hits) == ["1", "2"]


async def test_session_entries_skip_the_index(store: StoreHandle, data: DataDir) -> None:
    """Session entries are ranked in memory by their sessions, so the writer indexes none."""
    await store.append(data.session_journal("s1"), [_note("cookie")])
    assert await store.search("chunks", ["cookie"], journals=None, limit=10) == []
    assert store.blocking.watermark("sessions/s1.jsonl") == 0


async def test_deleted_index_is_rebuilt(data: DataDir) -> None:
    """Deleting the index file loses nothing: catch-up rebuilds it from the journal."""
    path = data.docs / "d.jsonl"
    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(
            partial(run_store_writer, data, lock_timeout_s=5.0, rows_for=chunk_rows)
        )
        await store.append(path, [_chunk(0, "alpha"), _chunk(1, "beta")])
        await store.aclose()
    data.index_path.unlink()
    async with trio.open_nursery() as nursery:
        store = await nursery.start(partial(run_store_writer, data, lock_timeout_s=5.0, rows_for=chunk_rows))
        assert await store.catch_up(path) == 2
        hits = await store.search("chunks", ["beta"], journals=None, limit=10)
        assert [h.item for h in hits] == ["1"]
        await store.aclose()


async def test_journal_replaced_by_another_process_is_reopened(store: StoreHandle, data: DataDir) -> None:
    """If another process deletes a journal we hold open, the next append goes to the new file."""
    path = data.docs / "gen.jsonl"
    await store.append(path, [_chunk(0, "first")])
    path.unlink()
    await store.append(path, [_chunk(0, "second")])
    assert [r.data["text"] for r in read_journal(path).records] == ["second"]


async def test_read_lines_reads_only_the_spans_asked(store: StoreHandle, data: DataDir) -> None:
    """Each (file, start, end) gives the record on that line; gone files and partial spans give None."""
    path = data.session_journal("s1")
    result = await store.append(path, [_note("first"), _note("second")])
    first, second = result.records
    gone = data.session_journal("gone")
    found = await store.read_lines(
        [
            (path, second.offset, second.end),
            (gone, 0, 10),
            (path, first.offset, first.end - 1),
            (path, first.offset, first.end),
        ]
    )
    assert [record["text"] if record is not None else None for record in found] == ["second", None, None, "first"]


async def test_a_record_that_cannot_be_stored_fails_alone_and_the_writer_goes_on(
    store: StoreHandle, data: DataDir
) -> None:
    """A lone surrogate (a non-UTF-8 file name) in one append: that append fails clearly; the rest of its batch and later appends are stored."""
    path = data.session_journal("s1")
    outcomes: dict[str, str] = {}

    async def append(text: str) -> None:
        try:
            await store.append(path, [_note(text)])
            outcomes[text] = "ok"
        except StoreError as exc:
            outcomes[text] = str(exc)

    async with trio.open_nursery() as nursery:
        for text in ("before", "bad \udcff name", "after"):
            nursery.start_soon(append, text)
    assert outcomes["before"] == outcomes["after"] == "ok"
    assert "UnicodeEncodeError" in outcomes["bad \udcff name"]
    await store.append(path, [_note("later")])
    assert sorted(str(r.data["text"]) for r in read_journal(path).records) == ["after", "before", "later"]


async def test_a_batch_that_fails_unexpectedly_is_answered_and_the_writer_goes_on(
    data: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug raising inside one batch: its appends get a clear StoreError, and the next batch is stored."""
    from ctxtrio.store import writer as writer_module
    from ctxtrio.store.batch import process_batch

    real = process_batch
    calls: list[int] = []

    def once_broken(*args: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug")
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(writer_module, "process_batch", once_broken)
    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(partial(run_store_writer, data, lock_timeout_s=5.0))
        with pytest.raises(StoreError, match="internal store error \\(RuntimeError\\)"):
            await store.append(data.session_journal("s1"), [_note("lost to the bug")])
        await store.append(data.session_journal("s1"), [_note("stored")])
        await store.aclose()
    assert [r.data["text"] for r in read_journal(data.session_journal("s1")).records] == ["stored"]


async def test_append_then_writes_the_second_after_the_first_and_fsyncs_both_in_one_round(
    store: StoreHandle, data: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """append_then: the follow-up (a document's commit) is written after the first append, names where it
    ends, and both are fsynced once both are written (one round); both acknowledged."""
    events: list[tuple[str, str, int]] = []
    real_fsync, real_write = os.fsync, os.write

    def recording_fsync(fd: int) -> None:
        real_fsync(fd)
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"), os.fstat(fd).st_size))

    def recording_write(fd: int, data: bytes) -> int:
        events.append(("write", os.readlink(f"/proc/self/fd/{fd}"), len(data)))
        return real_write(fd, data)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "write", recording_write)
    chunks, catalog = data.docs / "d" / "g.jsonl", data.docs / "catalog.jsonl"
    first, second = await store.append_then(chunks, [_chunk(0, "zebra")], catalog, [_note("commit")])
    assert read_journal(chunks).end == first.end and read_journal(catalog).end == second.end
    assert [record.data[ENDS_AT] for record in read_journal(catalog).records] == [first.end]

    def first_event(kind: str, path: Path) -> int:
        return next(i for i, (what, name, _) in enumerate(events) if what == kind and name == str(path))

    assert first_event("write", chunks) < first_event("write", catalog) < first_event("fsync", chunks)
    assert events[first_event("fsync", chunks)][2] >= first.end
    assert events[first_event("fsync", catalog)][2] >= second.end
    assert await store.search("chunks", ["zebra"], journals=[data.journal_name(chunks)], limit=5)


async def test_append_then_writes_nothing_more_when_the_first_append_fails(store: StoreHandle, data: DataDir) -> None:
    """A first append that cannot be stored fails as itself; its follow-up is never written."""
    chunks, catalog = data.docs / "d" / "g.jsonl", data.docs / "catalog.jsonl"
    with pytest.raises(StoreError, match="UnicodeEncodeError"):
        await store.append_then(chunks, [_chunk(0, "bad \udcff")], catalog, [_note("commit")])
    assert not catalog.exists() or read_journal(catalog).records == []


async def test_the_commits_of_one_round_name_those_before_them_so_any_absorbs_them_all(
    store: StoreHandle, data: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two documents' commits written in one round: the later one's result names the earlier one's record
    (lead), so a state that ends where the round's commits begin takes both from it, whichever task runs
    first, without reading the catalog again; a state short of them (another's lines between) still re-reads."""
    entered, gate = threading.Event(), threading.Event()
    real_fsync = os.fsync

    def held_fsync(fd: int) -> None:
        entered.set()
        assert gate.wait(10)
        real_fsync(fd)

    catalog = data.docs / "catalog.jsonl"
    before = await store.append(catalog, [_note("an earlier commit")])
    monkeypatch.setattr(os, "fsync", held_fsync)
    results: dict[str, AppendResult] = {}

    async def commit(name: str) -> None:
        _, results[name] = await store.append_then(
            data.docs / name / "g.jsonl", [_chunk(0, name)], catalog, [_note(name)]
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(store.append, data.session_journal("s1"), [_note("holds the writer")]))
        await trio.to_thread.run_sync(entered.wait, 10)  # the writer waits in that round's fsync
        nursery.start_soon(commit, "a")
        nursery.start_soon(commit, "b")
        await trio.testing.wait_all_tasks_blocked()  # both queued: the next round takes them together
        gate.set()
    first, later = sorted(results.values(), key=lambda result: result.start)
    assert first.end == later.start and first.lead == ()
    assert later.lead == tuple(first.records)
    assert later.to_absorb(first.start) == [*first.records, *later.records]
    assert later.to_absorb(later.start) == later.records and later.to_absorb(later.end) == []
    assert later.to_absorb(before.start) is None  # a line not of this round lies between
