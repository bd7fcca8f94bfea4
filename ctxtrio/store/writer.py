"""The single store writer task and the handle producers use to reach it.

Every journal append, journal removal and index update goes through one bounded memory
channel to :func:`run_store_writer`, the only task that writes. It takes what is queued
(group commit): per journal one locked write and one fsync for all queued records, and
only then wakes each producer, so an append is acknowledged only once it is durable.
Then one SQLite transaction indexes it, in a task of its own: producers already run
meanwhile and the next batch is written and fsynced, while searches wait for it
(``index_settled``), so every search sees every acknowledged append. Batches are
indexed in order, one at a time; a batch with removals, catch-ups or heals waits for
the index first. A full channel makes producers wait.

Cancellation: a batch runs in one worker thread; trio does not abandon it, so a
cancelled writer finishes the batch it started (and acknowledges it) before it stops.
Shutdown: ``StoreHandle.aclose()`` closes the send side; the writer drains what is
queued, acknowledges it, closes the index and returns.

The index heals itself, with no restart. An index update that cannot take SQLite's
write lock (another process holds it) is deferred: the journal is durable, its name is
kept in ``IndexHealth.lagging`` and the gap is filled by a later batch, or by the next
search that needs it (which fails with a clear StoreError rather than silently finding
nothing if the lock is still held). A damaged index (corrupt, tables gone, file deleted
or replaced) is reopened or recreated and every document journal re-indexed, by the
writer, whether a write or a search found the damage.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import trio

from .._errors import CtxError, StoreError
from .index import Hit, IndexDamagedError, IndexRow, RowsFor, SearchIndex, Table, no_rows
from .journal import AppendResult, JournalAppender, ReadResult, Rewrite, RewriteResult, read_blocks, read_journal
from .layout import DataDir
from .records import NewRecord

__all__ = ["IndexHealth", "StoreHandle", "WriterStats", "open_store_channel", "run_store_writer"]

log = logging.getLogger("ctxtrio.store")

#: Queued operations before producers wait, and the most operations one batch takes.
DEFAULT_CAPACITY = 1024
MAX_BATCH = 4096
#: After the index's write lock was found busy, batches defer their index updates for
#: this long instead of each waiting ``WRITE_BUSY_S`` for it again.
BUSY_BACKOFF_S = 1.0


@dataclass(slots=True)
class WriterStats:
    """Counters for benchmarks and status: what the writer has done so far."""

    batches: int = 0
    appends: int = 0
    records: int = 0
    fsyncs: int = 0


@dataclass(slots=True)
class IndexHealth:
    """Document journals whose index update was deferred, and when to try again.

    Written by the writer's worker thread, read by searches on the event loop (plain
    dict operations, atomic under the GIL).
    """

    lagging: dict[str, Path] = field(default_factory=dict)
    retry_at: float = 0.0
    #: Times the index was healed (reopened or recreated and re-indexed) by this process.
    heals: int = 0


@dataclass(eq=False, slots=True)
class _Op:
    kind: str  # "append" | "remove" | "move" | "catch_up" | "lagging" | "heal" | "rewrite" | "reindex"
    path: Path
    records: list[NewRecord] = field(default_factory=list)
    rows: list[list[IndexRow]] | None = None
    #: For "append": write only if the journal's complete lines end exactly here.
    expect_end: int | None = None
    #: For "move": where the file goes. For "heal": whether the index file is corrupt.
    target: Path | None = None
    corrupt: bool = False
    done: trio.Event = field(default_factory=trio.Event)
    result: AppendResult | None = None
    added: int = 0
    error: CtxError | None = None
    transform: Rewrite | None = None
    rewritten: RewriteResult | None = None


class StoreHandle:
    """What services hold: durable appends, removals, and reads of journals and index."""

    def __init__(
        self,
        data: DataDir,
        index: SearchIndex,
        send: trio.MemorySendChannel[_Op],
        stats: WriterStats,
        health: IndexHealth | None = None,
        giving_up: threading.Event | None = None,
    ) -> None:
        self.data = data
        self._index = index  # private: services reach the index only through the methods below
        self.stats = stats
        self.health = health if health is not None else IndexHealth()
        self._send = send
        self._giving_up = giving_up if giving_up is not None else threading.Event()
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

    async def append_if(self, path: Path, records: Sequence[NewRecord], *, expect_end: int) -> AppendResult:
        """Append ``records`` only if the journal's complete lines still end at ``expect_end``.

        The check runs under the journal's OS lock, so a decision made on the journal as
        read up to ``expect_end`` holds across processes: if anyone appended since,
        nothing is written and :class:`~ctxtrio.store.journal.JournalChangedError` is
        raised (re-read and decide again).
        """
        op = _Op("append", path, list(records), expect_end=expect_end)
        await self._submit(op)
        assert op.result is not None
        return op.result

    async def remove(self, path: Path) -> None:
        """Delete a journal file and its index rows (after anything queued before it)."""
        await self._submit(_Op("remove", path))

    async def move(self, path: Path, target: Path) -> None:
        """Move a journal file to ``target`` (folders created) and drop its index rows."""
        await self._submit(_Op("move", path, target=target))

    async def heal(self, *, corrupt: bool) -> None:
        """Reopen (or, if ``corrupt``, recreate) the index and re-index every document journal."""
        await self._submit(_Op("heal", self.data.index_path, corrupt=corrupt))

    async def catch_up(self, path: Path) -> int:
        """Index what ``path`` holds beyond the index watermark; returns rows added."""
        op = _Op("catch_up", path)
        await self._submit(op)
        return op.added

    async def rewrite(self, path: Path, transform: Rewrite) -> RewriteResult:
        """Replace a journal with what ``transform`` makes of its records (see JournalAppender.rewrite).

        Its index rows are rebuilt from the new file in the same step.
        """
        op = _Op("rewrite", path, transform=transform)
        await self._submit(op)
        assert op.rewritten is not None
        return op.rewritten

    async def reindex(self, path: Path) -> int:
        """Drop a journal's index rows and index it again from the file; returns rows added."""
        op = _Op("reindex", path)
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
        """BM25 matches from the index (off the event loop); sees every acknowledged append.

        Deferred index updates of the journals searched are filled first; if another
        process still holds the index's write lock, StoreError says so (never a silent
        empty result). A damaged index is healed by the writer and searched again.
        """
        await self.index_settled()
        if self._lags(journals):
            await self._submit(_Op("lagging", self.data.index_path))
            if self._lags(journals):
                raise StoreError(
                    f"the search index is locked by another process; {len(self.health.lagging)} recently "
                    "written document(s) are not searchable yet: try again in a few seconds"
                )

        def run() -> list[Hit]:
            return self._index.search(table, terms, journals=journals, limit=limit)

        try:
            return await trio.to_thread.run_sync(run)
        except IndexDamagedError as exc:
            log.warning("%s: healing it", exc)
            await self.heal(corrupt=exc.corrupt)
            return await trio.to_thread.run_sync(run)

    def _lags(self, journals: Sequence[str] | None) -> bool:
        lagging = self.health.lagging
        if not lagging:
            return False
        return journals is None or any(name in lagging for name in journals)

    def read_now(self, path: Path, start: int = 0) -> ReadResult:
        """Complete records of the journal from ``start`` (blocking: call from a worker thread)."""
        return read_journal(path, start, quarantine_dir=self.data.quarantine)

    def read_blocks(self, path: Path, start: int = 0, *, block_bytes: int = 4 << 20) -> Iterator[ReadResult]:
        """The journal's complete records from ``start``, a block at a time (blocking: call
        from a worker thread). Malformed lines go to the data dir's quarantine."""
        return read_blocks(path, start, block_bytes=block_bytes, quarantine_dir=self.data.quarantine)

    def watermark(self, journal: str) -> int:
        """How far into ``journal`` the index has indexed (blocking: call from a worker thread)."""
        return self._index.watermark(journal)

    async def inventory(self) -> dict[str, tuple[int, int]]:
        """Journal name -> (indexed offset, rows), for every journal the index knows."""
        return await trio.to_thread.run_sync(self._index.inventory)

    def give_up_waiting(self) -> None:
        """Shutdown is past its deadline: journal lock waits fail at once instead of timing out."""
        self._giving_up.set()

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
    rows_for: RowsFor = no_rows,
    capacity: int = DEFAULT_CAPACITY,
    task_status: trio.TaskStatus[StoreHandle] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Own the journals and the index until the handle is closed.

    Opens the index, reports a usable :class:`StoreHandle` through ``task_status``, then
    serves batches until the channel is closed and drained. The index is closed on exit.
    """
    index = SearchIndex(data.index_path, rows_for)
    if await trio.to_thread.run_sync(index.open):
        await trio.to_thread.run_sync(_reindex, data, index)
    appender = JournalAppender(lock_timeout_s=lock_timeout_s, quarantine_dir=data.quarantine)
    send, recv = open_store_channel(capacity)
    stats = WriterStats()
    health = IndexHealth()
    handle = StoreHandle(data, index, send, stats, health, giving_up=appender.giving_up)
    try:
        task_status.started(handle)
        async with recv, trio.open_nursery() as indexer:
            previous: trio.Event | None = None  # the index flush of the last batch (one at a time)
            async for first in recv:
                batch = [first]
                while len(batch) < MAX_BATCH:
                    try:
                        batch.append(recv.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                if previous is not None and any(op.kind != "append" for op in batch):
                    await previous.wait()  # maintenance uses the index connection itself
                pending: list[_IndexWork] = []
                indexing: trio.Event | None = None
                try:
                    pending = await trio.to_thread.run_sync(_process_batch, data, index, appender, batch, stats, health)
                    if pending:
                        # Before the acknowledgements: a search that follows them waits for this batch.
                        handle._indexing = indexing = trio.Event()
                finally:
                    for op in batch:
                        if op.result is None and op.error is None and op.kind == "append":
                            op.error = StoreError("the store writer stopped before this append")
                        op.done.set()
                if indexing is not None:
                    # Acknowledged producers run, and the next batch is written and
                    # fsynced, while SQLite (which releases the GIL) indexes this one.
                    if previous is not None:
                        await previous.wait()  # batches are indexed in order, one at a time
                    indexer.start_soon(_index_in_thread, handle, indexing, data, index, pending, health)
                    previous = indexing
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(index.close)
            appender.close()


_IndexWork = tuple[str, Path, AppendResult, dict[int, list[IndexRow]]]


async def _index_in_thread(
    handle: StoreHandle,
    indexing: trio.Event,
    data: DataDir,
    index: SearchIndex,
    pending: list[_IndexWork],
    health: IndexHealth,
) -> None:
    """Index one acknowledged batch, then wake the searches waiting for it."""
    try:
        await trio.to_thread.run_sync(_flush_index, data, index, pending, health)
    finally:
        if handle._indexing is indexing:
            handle._indexing = None
        indexing.set()


def _process_batch(
    data: DataDir, index: SearchIndex, appender: JournalAppender, batch: list[_Op], stats: WriterStats,
    health: IndexHealth,
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
        if op.kind == "append" and op.expect_end is None:
            groups.setdefault(op.path, []).append(op)
        elif op.kind == "append":  # a conditional append goes alone, after what precedes it
            group = groups.pop(op.path, [])
            _flush_appends(data, {op.path: group} if group else {}, appender, pending, stats, index.rows_for)
            _flush_appends(data, {op.path: [op]}, appender, pending, stats, index.rows_for)
        else:
            _flush_appends(data, groups, appender, pending, stats, index.rows_for)
            groups = {}
            _flush_index(data, index, pending, health)
            pending = []
            _run_maintenance(data, index, appender, op, health)
    _flush_appends(data, groups, appender, pending, stats, index.rows_for)
    return pending


def _flush_appends(
    data: DataDir,
    groups: dict[Path, list[_Op]],
    appender: JournalAppender,
    pending: list[_IndexWork],
    stats: WriterStats,
    rows_for: RowsFor,
) -> None:
    for path, ops in groups.items():
        records = [record for op in ops for record in op.records]
        try:
            result = appender.append(path, records, expect_end=ops[0].expect_end if len(ops) == 1 else None)
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


def _flush_index(data: DataDir, index: SearchIndex, pending: list[_IndexWork], health: IndexHealth) -> None:
    """Index what a batch appended, and deferred journals too; defer again if the lock is busy."""
    if not pending:
        return
    if health.lagging and time.monotonic() < health.retry_at:
        # Still backing off from a busy lock: the journals are durable, fill the gap later.
        health.lagging.update((name, path) for name, path, _, _ in pending)
        return
    try:
        index.index_batch([(name, path, result.records, result.end, rows) for name, path, result, rows in pending])
        _catch_up_lagging(index, health)
    except IndexDamagedError as exc:
        log.warning("%s: healing it", exc)
        _heal(data, index, health, corrupt=exc.corrupt)
    except StoreError as exc:
        # The journals are durable; the watermark did not move, so a later batch or the
        # next search of these journals re-indexes the gap.
        health.lagging.update((name, path) for name, path, _, _ in pending)
        health.retry_at = time.monotonic() + BUSY_BACKOFF_S
        log.warning("index update deferred for %d journal(s): %s", len(health.lagging), exc)


def _catch_up_lagging(index: SearchIndex, health: IndexHealth) -> None:
    """Fill the index gaps of deferred journals (raises StoreError if the lock is still busy)."""
    for name, path in list(health.lagging.items()):
        index.catch_up(name, path, _size(path))
        health.lagging.pop(name, None)


def _heal(data: DataDir, index: SearchIndex, health: IndexHealth, *, corrupt: bool) -> None:
    """Reopen (or recreate, if ``corrupt``) the index and re-index every document journal."""
    index.heal(corrupt=corrupt)
    health.heals += 1
    _reindex(data, index)
    health.lagging.clear()


def _reindex(data: DataDir, index: SearchIndex) -> None:
    """Index every document journal up to its end (only the gaps: watermarks are kept)."""
    try:
        folders = [Path(entry.path) for entry in os.scandir(data.docs) if entry.is_dir(follow_symlinks=False)]
    except OSError as exc:
        raise StoreError(f"cannot list {data.docs}: {exc.strerror or exc}") from exc
    added = 0
    for folder in sorted(folders):
        for path in sorted(folder.glob("*.jsonl")):
            added += index.catch_up(data.journal_name(path), path, _size(path))
    log.info("search index: %d rows re-indexed from the document journals", added)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise StoreError(f"cannot stat {path}: {exc.strerror or exc}") from exc


def _run_maintenance(data: DataDir, index: SearchIndex, appender: JournalAppender, op: _Op, health: IndexHealth) -> None:
    name = data.journal_name(op.path)
    try:
        if op.kind in ("remove", "move"):
            _remove_file(op)
            appender.forget(op.path)
            health.lagging.pop(name, None)
            try:
                index.forget(name)
            except IndexDamagedError:
                raise
            except StoreError as exc:
                # Deleting rows needs free space (SQLite writes the deletion first): on a
                # full disk the rows of a removed journal would stay, and hold the space.
                # The index is derived: drop it and rebuild it from the journals left.
                log.warning("search index could not forget %s (%s); rebuilding it from the journals", name, exc)
                _heal(data, index, health, corrupt=True)
        elif op.kind in ("catch_up", "rewrite", "reindex"):
            if op.kind == "rewrite":
                assert op.transform is not None
                op.rewritten = appender.rewrite(op.path, op.transform)
                if op.rewritten.changed:
                    index.forget(name)
            elif op.kind == "reindex":
                index.forget(name)
            op.added = index.catch_up(name, op.path, _size(op.path))
        elif op.kind == "lagging":
            try:
                _catch_up_lagging(index, health)
            except IndexDamagedError:
                raise
            except StoreError as exc:  # still busy: the search that asked reports it
                health.retry_at = time.monotonic() + BUSY_BACKOFF_S
                log.warning("deferred index updates still blocked: %s", exc)
        elif op.kind == "heal":
            _heal(data, index, health, corrupt=op.corrupt)
    except IndexDamagedError as exc:
        try:
            _heal(data, index, health, corrupt=exc.corrupt)
        except CtxError as again:
            op.error = again
    except CtxError as exc:
        op.error = exc


def _remove_file(op: _Op) -> None:
    try:
        if op.target is None:
            op.path.unlink(missing_ok=True)
        else:
            op.target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.replace(op.path, op.target)
    except FileNotFoundError:
        pass
    except OSError as exc:
        action = "remove" if op.target is None else f"move to {op.target}"
        raise StoreError(f"cannot {action} {op.path}: {exc.strerror or exc}") from exc
