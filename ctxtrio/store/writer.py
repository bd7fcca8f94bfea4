"""The single store writer task (producers reach it through :class:`~.handle.StoreHandle`).

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

What one batch does, in its worker thread, is :mod:`.batch`.

The index heals itself, with no restart. An index update that cannot take SQLite's
write lock (another process holds it) is deferred: the journal is durable, its name is
kept in ``IndexHealth.lagging`` and the gap is filled by a later batch, or by the next
search that needs it (which fails with a clear StoreError rather than silently finding
nothing if the lock is still held). A damaged index (corrupt, tables gone, file deleted
or replaced) is reopened or recreated and every document journal re-indexed, by the
writer, whether a write or a search found the damage.
"""

from __future__ import annotations

import trio

from .._errors import StoreError
from .batch import IndexWork, flush_index, process_batch, reindex_documents
from .handle import DEFAULT_CAPACITY, IndexHealth, StoreHandle, WriterStats, open_store_channel
from .index import SearchIndex
from .journal import JournalAppender
from .layout import DataDir
from .rows import RowsFor, no_rows

# StoreHandle, IndexHealth, WriterStats and open_store_channel live in .handle; they are
# named here too, where they were first defined.
__all__ = ["IndexHealth", "StoreHandle", "WriterStats", "open_store_channel", "run_store_writer"]

#: The most operations one batch takes.
MAX_BATCH = 4096


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
        await trio.to_thread.run_sync(reindex_documents, data, index)
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
                pending: list[IndexWork] = []
                indexing: trio.Event | None = None
                try:
                    pending = await trio.to_thread.run_sync(process_batch, data, index, appender, batch, stats, health)
                    if pending:
                        # Before the acknowledgements: a search that follows them waits for this batch.
                        indexing = handle.indexing_started()
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


async def _index_in_thread(
    handle: StoreHandle,
    indexing: trio.Event,
    data: DataDir,
    index: SearchIndex,
    pending: list[IndexWork],
    health: IndexHealth,
) -> None:
    """Index one acknowledged batch, then wake the searches waiting for it."""
    try:
        await trio.to_thread.run_sync(flush_index, data, index, pending, health)
    finally:
        handle.indexing_done(indexing)
