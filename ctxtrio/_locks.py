"""Holding a trio lock or limiter without a schedule point when it is free.

``async with lock`` checkpoints even when the lock is free: trio's ``acquire`` always
yields once, so the task waits for the next turn of the event loop. On a path taken once
a tool call whose other awaits already are checkpoints (a document ingest waits for the
store writer's acknowledgement), each such yield is only a loop turn more: an epoll poll,
a reschedule and a task step, ~30-60 µs of the event loop's CPU apiece.

:class:`Held` takes the lock at once when it is free (``acquire_nowait``) and waits for it
(``await acquire()``, a checkpoint) only when another task holds it. So it is not itself
a checkpoint: a caller that must be one (a loop that would otherwise never yield) has to
await something else. Cancellation: a task cancelled while it waits for the lock does not
hold it; one that took it at once releases it when the ``async with`` body exits, however
that happens.

:class:`CharBudget` is a limiter weighted by size, for memory held in flight.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol

import trio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from types import TracebackType

__all__ = ["CharBudget", "Held", "Lockable"]


class Lockable(Protocol):
    """What trio's ``Lock``, ``Semaphore`` and ``CapacityLimiter`` share."""

    def acquire_nowait(self) -> None: ...

    async def acquire(self) -> None: ...

    def release(self) -> None: ...


class Held:
    """``async with Held(lock):``, like ``async with lock:`` without the yield when it is free."""

    __slots__ = ("_lock",)

    def __init__(self, lock: Lockable) -> None:
        self._lock = lock

    async def __aenter__(self) -> None:
        try:
            self._lock.acquire_nowait()
        except trio.WouldBlock:
            await self._lock.acquire()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._lock.release()


class CharBudget:
    """A weighted limiter: the document service's ingests hold their text's length in characters
    until they finish, ``ctxtrio ingest``'s batches their files' bytes (so it lives here, for both).

    A holder waits while the others hold more than ``total - its size``; one larger than the
    whole budget runs alone. Waiters are woken in no particular order.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.free = total
        #: Ingests holding characters now.
        self.holders = 0
        self._lot = trio.lowlevel.ParkingLot()

    @asynccontextmanager
    async def hold(self, chars: int) -> AsyncIterator[None]:
        need = max(1, min(chars, self.total))
        while self.free < need:
            await self._lot.park()
        self.free -= need
        self.holders += 1
        try:
            yield
        finally:
            self.free += need
            self.holders -= 1
            self._lot.unpark_all()
