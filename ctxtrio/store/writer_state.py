"""State the store writer and its handle share: counters, the index's health, and which batch is being indexed.

:class:`WriterStats` and :class:`IndexHealth` are written by the writer's worker threads and
read by the handle's searches and by status (plain attribute and dict operations, atomic
under the GIL); :class:`IndexingState` lives on the event loop, set by the writer and
waited on by searches. Services never see any of them but through
:class:`~.handle.StoreHandle`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import trio

from .._clock import SYSTEM_CLOCK, ThreadClock

__all__ = ["IndexHealth", "IndexingState", "WriterStats"]


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
    #: Journals removed whose rows a deferred index update has yet to forget.
    unforgotten: set[str] = field(default_factory=set)
    #: When to try a deferred update again, on ``clock`` (the writer's thread has no trio clock).
    retry_at: float = 0.0
    clock: ThreadClock = SYSTEM_CLOCK
    #: Times the index was healed (reopened or recreated and re-indexed) by this process.
    heals: int = 0
    #: The index gave its room to the journals on a full disk: its files are deleted, searches
    #: fail saying why, and it is rebuilt once there is room (:mod:`.room`).
    shelved: bool = False
    #: Times the index was shelved by this process.
    shelves: int = 0
    #: Held by an index flush, and by a journal write that takes the index's room (other threads).
    writing: threading.Lock = field(default_factory=threading.Lock)


class IndexingState:
    """The writer's side of the handle: which acknowledged batch is still being indexed.

    Held by the writer (which calls :meth:`started` and :meth:`finished`) and by the
    handle (whose searches wait in :meth:`settled`); services never see it.
    """

    def __init__(self) -> None:
        #: Set while the writer indexes a batch it already acknowledged.
        self._indexing: trio.Event | None = None
        #: Set by a search that waits: the writer indexes what is queued at once, without
        #: waiting to gather more (replaced by the writer once it starts that flush).
        self.wanted = trio.Event()

    def started(self) -> trio.Event:
        """The writer acknowledges a batch it has yet to index: searches wait for the event returned."""
        self._indexing = indexing = trio.Event()
        return indexing

    def finished(self, indexing: trio.Event) -> None:
        """The writer indexed the batch of ``indexing``: wake the searches waiting for it."""
        if self._indexing is indexing:
            self._indexing = None
        indexing.set()

    async def settled(self) -> None:
        """Wait until every acknowledged append is in the index; queued work is indexed at once."""
        indexing = self._indexing
        if indexing is not None:
            self.wanted.set()
            await indexing.wait()
