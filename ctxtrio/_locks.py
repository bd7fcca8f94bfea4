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

:func:`prompt` does the same for the limiter of ``trio.to_thread.run_sync`` (which
documents "a CapacityLimiter-like object"): a free token starts the thread at once, where
trio's limiter yields a loop turn first. A task cancelled before it starts the thread then
learns it when the thread is done, not before (these threads are never abandoned).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

import trio

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Held", "Lockable", "prompt"]


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


class _Prompt:
    """A limiter for ``trio.to_thread.run_sync`` that takes a free token without a schedule point."""

    __slots__ = ("_limiter",)

    def __init__(self, limiter: trio.CapacityLimiter) -> None:
        self._limiter = limiter

    async def acquire_on_behalf_of(self, borrower: object) -> None:
        try:
            self._limiter.acquire_on_behalf_of_nowait(borrower)
        except trio.WouldBlock:
            await self._limiter.acquire_on_behalf_of(borrower)

    def release_on_behalf_of(self, borrower: object) -> None:
        self._limiter.release_on_behalf_of(borrower)


def prompt(limiter: trio.CapacityLimiter | None = None) -> trio.CapacityLimiter:
    """``limiter`` (trio's default thread limiter if None) for ``trio.to_thread.run_sync(...,
    limiter=...)``, taken without a schedule point when a token is free."""
    base = trio.to_thread.current_default_thread_limiter() if limiter is None else limiter
    # run_sync accepts "a CapacityLimiter-like object" (its docstring) but is typed with the final
    # class: the two methods it calls are _Prompt's.
    return cast("trio.CapacityLimiter", _Prompt(base))
