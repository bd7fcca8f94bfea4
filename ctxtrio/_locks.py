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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import trio

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Held", "Lockable"]


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
