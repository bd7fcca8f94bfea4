"""The single store writer task and the handle producers use to reach it.

Every journal append, journal removal and index update goes through one bounded memory
channel to :func:`run_store_writer`, the only task that writes. It takes what is queued
(group commit): per journal one locked write and one fsync for all queued records, and
only then wakes each producer, so an append is acknowledged only once it is durable.
Then, still as part of the same batch, one SQLite transaction indexes it; producers
already run meanwhile, and searches wait for it (``index_settled``), so every search
sees every acknowledged append. A full channel makes producers wait.

Cancellation: a batch runs in one worker thread; trio does not abandon it, so a
cancelled writer finishes the batch it started (and acknowledges it) before it stops.
Shutdown: ``StoreHandle.aclose()`` closes the send side; the writer drains what is
queued, acknowledges it, closes the index and returns.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import trio

from .._errors import CtxError, StoreError
from .index import Hit, IndexRow, SearchIndex, Table, rows_for
from .journal import AppendResult, JournalAppender, ReadResult, read_journal
from .layout import DataDir
from .records import NewRecord

__all__ = ["StoreHandle", "WriterStats", "open_store_channel", "run_store_writer"]

log = logging.getLogger("ctxtrio.store")

#: Queued operations before producers wait, and the most operations one batch takes.
DEFAULT_CAPACITY = 1024
MAX_BATCH = 4096


@dataclass(slots=True)
class WriterStats:
    """Counters for benchmarks and status: what the writer has done so far."""

    batches: int = 0
    appends: int = 0
    records: int = 0
    fsyncs: int = 0


@dataclass(eq=False, slots=True)
class _Op:
    kind: str  # "append" | "remove" | "catch_up"
    path: Path
    records: list[NewRecord] = field(default_factory=list)
    rows: list[list[IndexRow]] | None = None
    done: trio.Event = field(default_factory=trio.Event)
    result: AppendResult | None = None
    added: int = 0
    error: CtxError | None = None


class StoreHandle:
    """What services hold: durable appends, removals, and reads of journals and index."""

    def __init__(self, data: DataDir, index: SearchIndex, send: trio.MemorySendChannel[_Op], stats: WriterStats) -> None:
        self.data = data
        self.index = index
        self.stats = stats
        self._send = send
        #: Set while the writer indexes a batch it already acknowledged.
        self._indexing: trio.Event | None = None

    async def append(
        self, path: Path, records: Sequence[NewRecord], *, rows: Sequence[list[IndexRow]] | None = None
    ) -> AppendResult:
        """Append ``records`` to the journal at ``path``; returns once they are fsynced and indexed.

        ``rows``, when given, holds precomputed index rows, one list per record.
        If the caller is cancelled after the op was queued, the records may still be
        written: the journal, not the caller, is the truth.
        """
        op = _Op("append", path, list(records), list(rows) if rows is not None else None)
        await self._submit(op)
        assert op.result is not None
        return op.result

    async def remove(self, path: Path) -> None:
        """Delete a journal file and its index rows (after anything queued before it)."""
        await self._submit(_Op("remove", path))

    async def catch_up(self, path: Path) -> int:
        """Index what ``path`` holds beyond the index watermark; returns rows added."""
        op = _Op("catch_up", path)
        await self._submit(op)
        return op.added

    async def _submit(self, op: _Op) -> None:
        try:
            try:
                # Queue without a scheduling round trip when there is room; the wait
                # below is the checkpoint. A full channel makes the producer wait here.
                self._send.send_nowait(op)
            except trio.WouldBlock:
                await self._send.send(op)
        except (trio.ClosedResourceError, trio.BrokenResourceError) as exc:
            raise StoreError("the store is shutting down; try again after restart") from exc
        await op.done.wait()
        if op.error is not None:
            raise op.error

    async def read(self, path: Path, start: int = 0) -> ReadResult:
        """Complete records of the journal from ``start`` (off the event loop)."""
        return await trio.to_thread.run_sync(partial(read_journal, path, start, quarantine_dir=self.data.quarantine))

    async def index_settled(self) -> None:
        """Wait until every acknowledged append is in the index (at most one batch away)."""
        indexing = self._indexing
        if indexing is not None:
            await indexing.wait()

    async def search(self, table: Table, terms: Sequence[str], *, journals: Sequence[str] | None, limit: int) -> list[Hit]:
        """BM25 matches from the index (off the event loop); sees every acknowledged append."""
        await self.index_settled()

        def run() -> list[Hit]:
            return self.index.search(table, terms, journals=journals, limit=limit)

        return await trio.to_thread.run_sync(run)

    async def aclose(self) -> None:
        """Stop accepting operations; the writer drains what is queued and exits."""
        await self._send.aclose()


def open_store_channel(capacity: int = DEFAULT_CAPACITY) -> tuple[trio.MemorySendChannel[_Op], trio.MemoryReceiveChannel[_Op]]:
    """The bounded channel between producers and the writer."""
    return trio.open_memory_channel[_Op](capacity)


async def run_store_writer(
    data: DataDir,
    *,
    lock_timeout_s: float,
    capacity: int = DEFAULT_CAPACITY,
    task_status: trio.TaskStatus[StoreHandle] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Own the journals and the index until the handle is closed.

    Opens the index, reports a usable :class:`StoreHandle` through ``task_status``, then
    serves batches until the channel is closed and drained. The index is closed on exit.
    """
    index = SearchIndex(data.index_path)
    await trio.to_thread.run_sync(index.open)
    appender = JournalAppender(lock_timeout_s=lock_timeout_s, quarantine_dir=data.quarantine)
    send, recv = open_store_channel(capacity)
    stats = WriterStats()
    handle = StoreHandle(data, index, send, stats)
    try:
        task_status.started(handle)
        async with recv:
            async for first in recv:
                batch = [first]
                while len(batch) < MAX_BATCH:
                    try:
                        batch.append(recv.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                pending: list[_IndexWork] = []
                try:
                    pending = await trio.to_thread.run_sync(_process_batch, data, index, appender, batch, stats)
                finally:
                    for op in batch:
                        if op.result is None and op.error is None and op.kind == "append":
                            op.error = StoreError("the store writer stopped before this append")
                        op.done.set()
                if pending:
                    # Acknowledged producers run (and queue the next batch) while SQLite,
                    # which releases the GIL, indexes this one. Searches wait for it.
                    handle._indexing = indexing = trio.Event()
                    try:
                        await trio.to_thread.run_sync(_flush_index, index, pending)
                    finally:
                        handle._indexing = None
                        indexing.set()
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(index.close)
            appender.close()


_IndexWork = tuple[str, Path, AppendResult, dict[int, list[IndexRow]]]


def _process_batch(
    data: DataDir, index: SearchIndex, appender: JournalAppender, batch: list[_Op], stats: WriterStats
) -> list[_IndexWork]:
    """One group commit, in a worker thread: every journal written and fsynced.

    Returns the index work for the appends, which the writer runs after acknowledging
    them. Removals and catch-ups in the batch run in order, after flushing what
    precedes them (index included).
    """
    stats.batches += 1
    pending: list[_IndexWork] = []
    groups: dict[Path, list[_Op]] = {}
    for op in batch:
        if op.kind == "append":
            groups.setdefault(op.path, []).append(op)
        else:
            _flush_appends(data, groups, appender, pending, stats)
            groups = {}
            _flush_index(index, pending)
            pending = []
            _run_maintenance(data, index, appender, op)
    _flush_appends(data, groups, appender, pending, stats)
    return pending


def _flush_appends(
    data: DataDir,
    groups: dict[Path, list[_Op]],
    appender: JournalAppender,
    pending: list[_IndexWork],
    stats: WriterStats,
) -> None:
    for path, ops in groups.items():
        records = [record for op in ops for record in op.records]
        try:
            result = appender.append(path, records)
        except CtxError as exc:
            for op in ops:
                op.error = exc
            continue
        stats.fsyncs += 1
        stats.appends += len(ops)
        stats.records += len(records)
        rows: dict[int, list[IndexRow]] = {}
        position = 0
        for op in ops:
            mine = result.records[position : position + len(op.records)]
            position += len(op.records)
            start = mine[0].offset if mine else result.end
            op.result = AppendResult(path, mine, start, mine[-1].end if mine else result.end, result.foreign)
            for number, stored in enumerate(mine):
                found = op.rows[number] if op.rows is not None else rows_for(stored.data)
                if found:
                    rows[stored.offset] = found
        if rows:  # journals without searchable records (sessions) skip the index entirely
            pending.append((data.journal_name(path), path, result, rows))


def _flush_index(index: SearchIndex, pending: list[_IndexWork]) -> None:
    if not pending:
        return
    try:
        index.index_batch([(name, path, result.records, result.end, rows) for name, path, result, rows in pending])
    except StoreError as exc:
        # The journals are durable; the watermark did not move, so the next append or
        # catch-up of these journals re-indexes the gap.
        log.warning("index update deferred: %s", exc)


def _run_maintenance(data: DataDir, index: SearchIndex, appender: JournalAppender, op: _Op) -> None:
    name = data.journal_name(op.path)
    try:
        if op.kind == "remove":
            try:
                op.path.unlink(missing_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot remove {op.path}: {exc.strerror or exc}") from exc
            appender.forget(op.path)
            index.forget(name)
        elif op.kind == "catch_up":
            try:
                size = op.path.stat().st_size
            except FileNotFoundError:
                size = 0
            except OSError as exc:
                raise StoreError(f"cannot stat {op.path}: {exc.strerror or exc}") from exc
            op.added = index.catch_up(name, op.path, size)
    except CtxError as exc:
        op.error = exc
