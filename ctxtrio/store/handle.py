"""The handle services hold to reach the store writer: durable appends, removals, reads.

It has one face: async methods. Reads that block are apart, on :attr:`StoreHandle.blocking`
(:class:`BlockingReads`, for code already in a worker thread), and what only the writer
calls is on :class:`IndexingState`, which the writer and the handle share and services
never see (:mod:`.writer_state`, with the writer's counters and the index's health; named
here too, as the handle's attributes hold them).

Every write is an operation queued on one bounded memory channel to
:func:`~ctxtrio.store.writer.run_store_writer`, the only task that writes; a call returns
once its operation is durable (and acknowledged). Reads of journals and searches of the
index run here, off the event loop, and see every acknowledged append. A full channel
makes producers wait. The handle holds the index privately: services reach it only
through these methods.
"""

from __future__ import annotations

import logging
import threading
from functools import partial
from typing import TYPE_CHECKING, TypeVar

import trio

from .._errors import StoreError
from .index import IndexDamagedError, SearchIndex
from .index_errors import IndexBusyError
from .ops import AppendOp, CatchUpOp, HealOp, InstallOp, LaggingOp, MoveOp, ReindexOp, RemoveOp, RewriteOp, StoreOp
from .reading import ReadResult, read_blocks, read_journal, read_lines
from .writer_state import IndexHealth, IndexingState, WriterStats

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Sequence
    from pathlib import Path

    from ..text.neighbours import SearchWord
    from .layout import DataDir
    from .records import NewRecord, Record
    from .results import AppendResult, Rewrite, RewriteResult
    from .rows import Hit, IndexRow, Table

_T = TypeVar("_T")

__all__ = [
    "DEFAULT_CAPACITY",
    "BlockingReads",
    "IndexHealth",
    "IndexingState",
    "StoreHandle",
    "WriterStats",
    "open_store_channel",
]

log = logging.getLogger("ctxtrio.store")

#: Queued operations before producers wait.
DEFAULT_CAPACITY = 1024


class BlockingReads:
    """The store's reads that block, for code already in a worker thread (never the event loop)."""

    def __init__(self, data: DataDir, index: SearchIndex, *, read_only: bool = False) -> None:
        self._data = data
        self._index = index
        #: Where malformed lines are copied (None: a store opened read-only copies nothing).
        self._quarantine = None if read_only else data.quarantine

    def read(self, path: Path, start: int = 0) -> ReadResult:
        """Complete records of the journal from ``start``."""
        return read_journal(path, start, quarantine_dir=self._quarantine)

    def read_blocks(self, path: Path, start: int = 0, *, block_bytes: int = 4 << 20) -> Iterator[ReadResult]:
        """The journal's complete records from ``start``, a block at a time. Malformed lines
        go to the data dir's quarantine (unless the store is opened read-only)."""
        return read_blocks(path, start, block_bytes=block_bytes, quarantine_dir=self._quarantine)

    def watermark(self, journal: str) -> int:
        """How far into ``journal`` the index has indexed."""
        return self._index.watermark(journal)


class StoreHandle:
    """What services hold: durable appends, removals, and reads of journals and index."""

    def __init__(
        self,
        data: DataDir,
        index: SearchIndex,
        send: trio.MemorySendChannel[StoreOp],
        stats: WriterStats,
        health: IndexHealth | None = None,
        giving_up: threading.Event | None = None,
        indexing: IndexingState | None = None,
        *,
        read_only: bool = False,
    ) -> None:
        self.data = data
        #: Opened only to look (``ctxtrio doctor`` without ``--repair``): every operation fails, nothing is
        #: written, created or healed, and malformed journal lines are skipped without a copy in quarantine.
        self.read_only = read_only
        self._index = index  # private: services reach the index only through the methods below
        self.stats = stats
        self.health = health if health is not None else IndexHealth()
        self._send = send
        self._giving_up = giving_up if giving_up is not None else threading.Event()
        self._indexing = indexing if indexing is not None else IndexingState()
        #: Reads that block, for code in a worker thread.
        self.blocking = BlockingReads(data, index, read_only=read_only)
        #: Journals a search of a store opened read-only has said the index lacks (:meth:`_say_lacking`).
        self._said_lacking: set[str] = set()

    async def append(
        self, path: Path, records: Sequence[NewRecord], *, rows: Sequence[list[IndexRow]] | None = None
    ) -> AppendResult:
        """Append ``records`` to the journal at ``path``; returns once they are fsynced.

        The writer indexes ``rows`` after it acknowledges the batch; a search waits for
        that (:meth:`index_settled`), so nothing acknowledged is missed by a later search.

        ``rows``, when given, holds precomputed index rows, one list per record.
        If the caller is cancelled after the op was queued, the records may still be
        written: the journal, not the caller, is the truth.
        """
        op = AppendOp(path, list(records), list(rows) if rows is not None else None)
        await self._submit(op)
        assert op.outcome.result is not None
        return op.outcome.result

    async def append_then(
        self,
        path: Path,
        records: Sequence[NewRecord],
        then_path: Path,
        then_records: Sequence[NewRecord],
        *,
        rows: Sequence[list[IndexRow]] | None = None,
    ) -> tuple[AppendResult, AppendResult]:
        """Append ``records`` to ``path``, then ``then_records`` to ``then_path``, each of
        them naming where ``records`` end (:data:`~.ops.ENDS_AT`): both in one batch of the
        writer and one fsync round (one round trip, and one wait for the disk, instead of two).
        A process may read the second before both are durable, never before the first is
        written; after a crash, the second may be there without all of the first, so a
        reader checks that ``path`` reaches the end it names (a document's commit).

        Raises the first append's error (then nothing of ``then_records`` was written, unless
        the first failed only in its fsync: both were written), or the second's (the first is
        durable). Cancellation as for :meth:`append`: once queued, both may still be written.
        """
        second = AppendOp(then_path, list(then_records))
        op = AppendOp(path, list(records), list(rows) if rows is not None else None, then=second)
        await self._submit(op)
        if second.outcome.error is not None:
            raise second.outcome.error
        assert op.outcome.result is not None
        if second.outcome.result is None:  # the batch failed after the first append (logged by the writer)
            raise StoreError(f"internal store error: the append to {then_path.name} may not have been done")
        return op.outcome.result, second.outcome.result

    async def append_if(self, path: Path, records: Sequence[NewRecord], *, expect_end: int) -> AppendResult:
        """Append ``records`` only if the journal's complete lines still end at ``expect_end``.

        The check runs under the journal's OS lock, so a decision made on the journal as
        read up to ``expect_end`` holds across processes: if anyone appended since,
        nothing is written and :class:`~ctxtrio.store.results.JournalChangedError` is
        raised (re-read and decide again).
        """
        op = AppendOp(path, list(records), expect_end=expect_end)
        await self._submit(op)
        assert op.outcome.result is not None
        return op.outcome.result

    async def install(self, path: Path, records: Sequence[NewRecord]) -> AppendResult:
        """Write ``records`` as the whole new journal ``path``: all of them durably, or none.

        Never over a journal holding records, whoever created it:
        :class:`~ctxtrio.store.results.JournalExistsError` then, and nothing is written
        (see :mod:`~ctxtrio.store.install`). For journals without searchable records
        (sessions): nothing is indexed.
        """
        op = InstallOp(path, list(records))
        await self._submit(op)
        assert op.outcome.result is not None
        return op.outcome.result

    async def remove(self, path: Path) -> None:
        """Delete a journal file (after anything queued before it); returns once it is gone.

        Its index rows go with the writer's next index flush, which searches wait for
        (:meth:`index_settled`), so the removal itself never waits for the index.
        """
        await self._submit(RemoveOp(path))

    async def move(self, path: Path, target: Path) -> None:
        """Move a journal file to ``target`` (folders created) and drop its index rows (as :meth:`remove`)."""
        await self._submit(MoveOp(path, target))

    async def heal(self, *, corrupt: bool) -> None:
        """Reopen (or, if ``corrupt``, recreate) the index and re-index every document journal."""
        await self._submit(HealOp(self.data.index_path, corrupt))

    async def catch_up(self, path: Path) -> int:
        """Index what ``path`` holds beyond the index watermark; returns rows added."""
        op = CatchUpOp(path)
        await self._submit(op)
        return op.outcome.added

    async def rewrite(self, path: Path, transform: Rewrite) -> RewriteResult:
        """Replace a journal with what ``transform`` makes of its records (see JournalAppender.rewrite).

        Its index rows are rebuilt from the new file in the same step.
        """
        op = RewriteOp(path, transform)
        await self._submit(op)
        assert op.outcome.rewritten is not None
        return op.outcome.rewritten

    async def reindex(self, path: Path) -> int:
        """Drop a journal's index rows and index it again from the file; returns rows added."""
        op = ReindexOp(path)
        await self._submit(op)
        return op.outcome.added

    async def _submit(self, op: StoreOp) -> None:
        try:
            try:
                # Queue without a scheduling round trip when there is room; the wait
                # below is the checkpoint. A full channel makes the producer wait here.
                self._send.send_nowait(op)
            except trio.WouldBlock:
                await self._send.send(op)
        except (trio.ClosedResourceError, trio.BrokenResourceError) as exc:
            raise StoreError("the store is shutting down; try again after restart") from exc
        await op.outcome.done.wait()
        if op.outcome.error is not None:
            raise op.outcome.error

    async def read(self, path: Path, start: int = 0) -> ReadResult:
        """Complete records of the journal from ``start`` (off the event loop)."""
        return await trio.to_thread.run_sync(self.blocking.read, path, start)

    async def index_settled(self) -> None:
        """Wait until every acknowledged append is in the index (at most one batch away)."""
        await self._indexing.settled()

    async def search(
        self,
        table: Table,
        terms: Sequence[SearchWord],
        *,
        journals: Sequence[str] | None,
        limit: int,
        common: Collection[str] = (),
    ) -> list[Hit]:
        """BM25 matches from the index (off the event loop); sees every acknowledged append.

        Deferred index updates of the journals searched are filled first; if another
        process still holds the index's write lock, StoreError says so (never a silent
        empty result). A damaged index is healed by the writer and searched again.
        """
        await self.index_settled()
        if self.read_only:
            self._say_lacking(journals)  # (nothing to wait for: no process of this one can catch it up)
        elif self.health.shelved or self._lags(journals):  # (a shelved index is rebuilt if there is room now)
            await self._submit(LaggingOp(self.data.index_path))
            if self._lags(journals):
                raise StoreError(
                    f"the search index is locked by another process; {len(self.health.lagging)} recently "
                    "written document(s) are not searchable yet: try again in a few seconds"
                )

        return await self._healing(
            partial(self._index.search, table, terms, journals=journals, limit=limit, common=common)
        )

    async def doc_counts(self, table: Table, terms: Sequence[str]) -> dict[str, int]:
        """How many rows of ``table`` hold each of ``terms`` (off the event loop; see
        :meth:`~.index.SearchIndex.doc_counts`). Not waited for the index to settle: a statistic.
        A damaged index is healed by the writer and asked again, as by :meth:`search` (a query's
        words may be counted before it is searched: ``docs/search``'s expansion). A shelved index
        is rebuilt first if there is room now."""
        if self.health.shelved:
            await self._submit(LaggingOp(self.data.index_path))
        return await self._healing(partial(self._index.doc_counts, table, terms))

    async def _healing(self, read: Callable[[], _T]) -> _T:
        """``read`` of the index, off the event loop; a damaged index is healed by the writer and read again."""
        try:
            return await trio.to_thread.run_sync(read)
        except IndexDamagedError as exc:
            if self.read_only:  # (it said 'healing it', then that the heal was refused)
                raise StoreError(
                    f"{exc}: it is not rebuilt here, the data dir is opened read-only; a server's start or ctxtrio "
                    "doctor --repair rebuilds it"
                ) from exc
            log.warning("%s: healing it", exc)
            await self.heal(corrupt=exc.corrupt)
            return await trio.to_thread.run_sync(read)
        except IndexBusyError:  # opened while another process held its lock: the writer opens it again
            await self.heal(corrupt=False)  # (IndexBusyError again while it still holds it)
            return await trio.to_thread.run_sync(read)

    async def catch_up_later(self, paths: Sequence[Path]) -> None:
        """Journals the index may hold less of than their file (another process's commits a catalog replay
        found: its index update was deferred by a lock and it exited, or it died before its index commit;
        files the startup sweep could not check): those it does are caught up as this process's deferred
        updates are, by the next search of them, which says so if the index is still locked. An index that
        cannot be asked counts as behind. In a store opened read-only nobody here catches them up: a search
        searches what the index holds and says which documents it lacks (:meth:`_say_lacking`)."""
        if paths:
            for name, path in await trio.to_thread.run_sync(self._behind, paths):
                self.health.lagging[name] = path

    def _behind(self, paths: Sequence[Path]) -> list[tuple[str, Path]]:
        behind = []
        for path in paths:
            name = self.data.journal_name(path)
            try:
                if self._index.watermark(name) >= path.stat().st_size:
                    continue
            except (StoreError, OSError):  # (unreadable index: the catch-up heals or reports it; a gone file: nothing)
                pass
            behind.append((name, path))
        return behind

    def _say_lacking(self, journals: Sequence[str] | None) -> None:
        """Warn, once a journal, of those searched that the index holds less of than their file (a store
        opened read-only: ``ctxtrio search`` on a data dir this user cannot write). Failing the search instead,
        as a catch-up the store refuses, answered nothing, not even from the documents the index holds."""
        lacking = [
            (name, path)
            for name, path in self.health.lagging.items()
            if name not in self._said_lacking and (journals is None or name in journals)
        ]
        if lacking:
            self._said_lacking.update(name for name, _ in lacking)
            log.warning(
                "the search index of this data dir, opened read-only, lacks all or part of %d document(s), which "
                "this search did not look through: %s; a server's start or ctxtrio doctor --repair indexes them",
                len(lacking),
                ", ".join(sorted({path.parent.name for _, path in lacking})),  # docs/<doc_id>/<gen>.jsonl
            )

    def _lags(self, journals: Sequence[str] | None) -> bool:
        lagging = self.health.lagging
        if not lagging:
            return False
        return journals is None or any(name in lagging for name in journals)

    async def read_lines(self, spans: Sequence[tuple[Path, int, int]]) -> list[Record | None]:
        """The record on each (journal, line start, line end), None where there is none (off the event loop).

        Only those lines are read (see :func:`~.reading.read_lines`): a search that knows
        where its chunks are need not load whole documents.
        """
        return await trio.to_thread.run_sync(read_lines, spans)

    async def indexed_journals(self) -> list[str]:
        """Every journal the index knows, as it stands (queued index work is not waited for)."""
        return await trio.to_thread.run_sync(self._index.journal_names)

    async def inventory(self) -> dict[str, tuple[int, int]]:
        """Journal name -> (indexed offset, rows), for every journal the index knows (once settled)."""
        await self.index_settled()
        return await trio.to_thread.run_sync(self._index.inventory)

    def give_up_waiting(self) -> None:
        """Shutdown is past its deadline: journal lock waits fail at once instead of timing out."""
        self._giving_up.set()

    async def aclose(self) -> None:
        """Stop accepting operations; the writer drains what is queued and exits."""
        await self._send.aclose()


def open_store_channel(
    capacity: int = DEFAULT_CAPACITY,
) -> tuple[trio.MemorySendChannel[StoreOp], trio.MemoryReceiveChannel[StoreOp]]:
    """The bounded channel between producers and the writer."""
    return trio.open_memory_channel[StoreOp](capacity)
