"""The single store writer task (producers reach it through :class:`~.handle.StoreHandle`).

Every journal append, journal removal and index update goes through one bounded memory
channel to :func:`run_store_writer`, the only task that writes. It takes what is queued
(group commit): per journal one locked write and one fsync for all queued records, and
only then wakes each producer, so an append is acknowledged only once it is durable.
Then SQLite indexes it, in a task of its own (:class:`_Indexer`): producers already
run meanwhile and the next batches are written and fsynced, while searches wait for it
(``index_settled``), so every search sees every acknowledged append. Batches are
indexed in order, gathered: a flush starts :data:`FLUSH_DELAY_S` after the first batch
it takes (at once when a search waits for it or much is queued), so documents ingested
one after another are indexed several to a transaction and a worker-thread call. A batch with removals, catch-ups or heals waits for the
index first. A full channel makes producers wait.

Cancellation: a batch runs in one worker thread; trio does not abandon it, so a
cancelled writer finishes the batch it started (and acknowledges it) before it stops.
Shutdown: ``StoreHandle.aclose()`` closes the send side; the writer drains what is
queued, acknowledges it, closes the index and returns.

What one batch does, in its worker thread, is :mod:`.batch`.

The index heals itself, with no restart. An index update that cannot take SQLite's
write lock (another process holds it) is deferred: the journal is durable, its name is
kept in ``IndexHealth.lagging`` and the gap is filled by a later batch, or by the next
search that needs it (which fails with a clear StoreError rather than silently finding
nothing if the lock is still held). A damaged index (corrupt, tables gone, file deleted
or replaced) is reopened or recreated and every document journal re-indexed, by the
writer, whether a write or a search found the damage. On a full disk the index gives its
room to the journals, and is rebuilt once there is room (:mod:`.room`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from .._errors import StoreError
from .batch import process_batch
from .handle import DEFAULT_CAPACITY, StoreHandle, open_store_channel
from .index import Forget, SearchIndex
from .index_flush import IndexWork, defer, flush_index, open_index
from .journal import JournalAppender
from .ops import AppendOp, MoveOp, RemoveOp, StoreOp
from .rows import RowsFor, no_rows
from .writer_state import IndexHealth, IndexingState, WriterStats

if TYPE_CHECKING:
    from .layout import DataDir

__all__ = ["run_store_writer"]

log = logging.getLogger("ctxtrio.store")

#: The most operations one batch takes.
MAX_BATCH = 4096
#: How long acknowledged appends wait to be indexed with later ones (a search, or
#: :attr:`_Indexer.PROMPT_CHARS` of index text queued, starts the flush at once).
FLUSH_DELAY_S = 0.05


async def run_store_writer(
    data: DataDir,
    *,
    lock_timeout_s: float,
    rows_for: RowsFor = no_rows,
    capacity: int = DEFAULT_CAPACITY,
    read_only: bool = False,
    task_status: trio.TaskStatus[StoreHandle] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Own the journals and the index until the handle is closed.

    Opens the index, reports a usable :class:`StoreHandle` through ``task_status``, then
    serves batches until the channel is closed and drained. The index is closed on exit.
    ``read_only`` (``ctxtrio doctor`` without ``--repair``): nothing is written, created or
    healed; the index is read through :mod:`.read_only`, and every operation fails with StoreError.
    """
    index = SearchIndex(data.index_path, rows_for, read_only=read_only)
    health = IndexHealth()
    if not read_only:
        await trio.to_thread.run_sync(open_index, data, index, health)
    appender = JournalAppender(lock_timeout_s=lock_timeout_s, quarantine_dir=data.quarantine, folders_in=[data.docs])
    send, recv = open_store_channel(capacity)
    stats = WriterStats()
    indexing = IndexingState()
    handle = StoreHandle(
        data, index, send, stats, health, giving_up=appender.giving_up, indexing=indexing, read_only=read_only
    )
    try:
        task_status.started(handle)
        if read_only:
            await _refuse(recv)
            return
        async with recv, trio.open_nursery() as nursery:
            indexer = _Indexer(indexing, data, index, health, nursery)
            async for first in recv:
                batch = [first]
                while len(batch) < MAX_BATCH:
                    try:
                        batch.append(recv.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                if not all(isinstance(op, AppendOp | RemoveOp | MoveOp) for op in batch):
                    # Maintenance uses the index connection itself: wait as a search does, for
                    # every acknowledged append to be indexed (the latest flush's event).
                    # Removals do not: their rows are forgotten by the index work that follows.
                    await handle.index_settled()
                try:
                    try:
                        pending = await trio.to_thread.run_sync(
                            process_batch, data, index, appender, batch, stats, health
                        )
                    except Exception as exc:  # (one bad operation must not stop every later write)
                        log.exception("store writer: a batch of %d operation(s) failed; it goes on", len(batch))
                        _fail_unfinished(batch, exc)
                        pending = []
                    # Before the acknowledgements: a search that follows them waits for this batch.
                    indexer.add(pending)
                finally:
                    for op in batch:
                        if isinstance(op, AppendOp) and not op.outcome.settled:
                            op.outcome.error = StoreError("the store writer stopped before this append")
                        op.outcome.done.set()
                await indexer.keep_up()
            indexer.closing()
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(index.close)
            appender.close()


class _Indexer:
    """Indexes acknowledged appends in order, in as few SQLite transactions as it can.

    One flush runs at a time, in a worker thread, in a task of ``nursery``; it starts
    :data:`FLUSH_DELAY_S` after work is queued, and what the writer acknowledges until
    then, or while a flush runs, is indexed by one flush, all of it in one transaction
    (an FTS5 transaction has a fixed cost: 50 documents indexed one transaction each
    take ~1.6x the time of one transaction for all; and each flush is a worker-thread
    call). A search that waits (:meth:`StoreHandle.index_settled`, the event of the
    latest work queued, set only once everything before it is indexed too) or
    :attr:`PROMPT_CHARS` queued start it at once. Cancelling the nursery leaves the
    journals durable; the index catches up from them at the next start.
    """

    #: Characters of index text queued before the writer waits for the flush in progress
    #: (bounds memory; transactions of ~10 documents of 100 KB already cost no more per byte).
    MAX_QUEUED_CHARS = 8_000_000
    #: Characters of index text queued that start a flush without waiting for more.
    PROMPT_CHARS = 1_000_000

    def __init__(
        self, indexing: IndexingState, data: DataDir, index: SearchIndex, health: IndexHealth, nursery: trio.Nursery
    ) -> None:
        self._indexing = indexing
        self._data = data
        self._index = index
        self._health = health
        self._nursery = nursery
        self._queue: list[IndexWork] = []
        self._queued_chars = 0
        #: Set when the queued work is indexed (None: nothing queued).
        self._queued: trio.Event | None = None
        #: Set when the flush in progress ends (None: none runs).
        self._running: trio.Event | None = None
        #: A task waits to start the next flush (see :meth:`_start_later`).
        self._waiting = False
        self._closing = False

    def add(self, pending: list[IndexWork]) -> None:
        """Queue a batch's index work; start a flush unless one runs (it starts the next)."""
        if not pending:
            return
        self._queue.extend(pending)
        self._queued_chars += sum(
            len(row.terms)
            for work in pending
            if not isinstance(work, Forget)
            for found in work[3].values()
            for row in found
        )
        if self._queued is None:
            self._queued = self._indexing.started()
        if self._queued_chars >= self.PROMPT_CHARS:
            self._indexing.wanted.set()
        self._schedule()

    def _schedule(self) -> None:
        """Start the next flush once the one in progress ends and the delay has passed."""
        if self._running is None and not self._waiting:
            self._waiting = True
            self._nursery.start_soon(self._start_later)

    def closing(self) -> None:
        """No more work comes: index what is queued without waiting for more."""
        self._closing = True
        self._indexing.wanted.set()

    async def _start_later(self) -> None:
        if not self._closing:
            with trio.move_on_after(FLUSH_DELAY_S):
                await self._indexing.wanted.wait()
        self._waiting = False
        self._indexing.wanted = trio.Event()  # a search waiting from now on asks again
        if self._queue and self._running is None:
            self._start()

    async def keep_up(self) -> None:
        """Wait for the flush in progress while too much is queued behind it (backpressure)."""
        while self._running is not None and self._queued_chars > self.MAX_QUEUED_CHARS:
            await self._running.wait()

    def _start(self) -> None:
        work, event = self._queue, self._queued
        assert event is not None
        self._queue, self._queued, self._queued_chars = [], None, 0
        self._running = event
        self._nursery.start_soon(self._flush, work, event)

    async def _flush(self, work: list[IndexWork], event: trio.Event) -> None:
        try:
            await trio.to_thread.run_sync(flush_index, self._data, self._index, work, self._health)
        except Exception:  # (the journals are durable: their index catches up later)
            log.exception("store writer: indexing %d journal(s) failed; searches catch them up", len(work))
            defer(work, self._health)
        finally:
            self._running = None
            self._indexing.finished(event)
            if self._queue:
                self._schedule()


async def _refuse(recv: trio.MemoryReceiveChannel[StoreOp]) -> None:
    """Fail every operation until the handle is closed: the store was opened only to look."""
    async with recv:
        async for op in recv:
            op.outcome.error = StoreError(
                f"the data dir is opened read-only here (it cannot be written, or doctor without --repair): this "
                f"{op.kind} of {op.path.name} was not done; a server's start or ctxtrio doctor --repair does it"
            )
            op.outcome.done.set()


def _fail_unfinished(batch: list[StoreOp], exc: Exception) -> None:
    """Give every operation of a failed batch that has no outcome yet an error saying so."""
    for op in batch:
        if not op.outcome.settled:
            op.outcome.error = StoreError(
                f"internal store error ({type(exc).__name__}) during this batch: this {op.kind} of "
                f"{op.path.name} may not have been done; the store goes on"
            )
