"""Which requests are in flight on a line-based transport, so shutdown can wait for them,
and so the reader can stop reading while too many answers are still owed.

The SDK cancels what it is serving when its read stream ends. "Stop accepting, give
in-flight calls a bounded grace period" therefore happens here: the line source asks
:class:`InFlight` to wait until every request it passed on has been answered (or the
grace period ends) before it reports EOF to the SDK.
"""

from __future__ import annotations

import logging

import trio

__all__ = ["InFlight"]

log = logging.getLogger("ctxtrio")


class InFlight:
    """Request ids read but not yet answered."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._idle = trio.Event()
        self._idle.set()
        #: Set (and replaced) whenever a request finishes.
        self._finished = trio.Event()

    def __len__(self) -> int:
        return len(self._ids)

    def started(self, token: str) -> None:
        self._ids.add(token)
        if self._idle.is_set():
            self._idle = trio.Event()

    def finished(self, token: str) -> None:
        self._ids.discard(token)
        self._finished.set()
        self._finished = trio.Event()
        if not self._ids:
            self._idle.set()

    async def wait_below(self, limit: int) -> None:
        """Return once fewer than ``limit`` requests are in flight."""
        while len(self._ids) >= limit:
            await self._finished.wait()

    async def wait_idle(self) -> None:
        """Return once nothing is in flight."""
        while self._ids:
            await self._idle.wait()

    async def settle(self, grace_s: float, answer_s: float) -> None:
        """Return once nothing is in flight, or ``grace_s + answer_s`` from now: the shutdown grace the
        calls get, then the moment kept for the answers of those it cut off. What is still in flight
        then is logged, with the time waited; the caller cancels it (and so leaves it unanswered)."""
        waited_s = grace_s + answer_s
        with trio.move_on_after(waited_s) as waiting:
            await self.wait_idle()
        if waiting.cancelled_caught:
            log.warning(
                "%d request(s) still in flight after %g s (the shutdown grace, %g s, and %g s kept for answers): "
                "cancelling them",
                len(self._ids),
                waited_s,
                grace_s,
                answer_s,
            )
