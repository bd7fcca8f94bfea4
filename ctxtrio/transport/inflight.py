"""Which requests are in flight on a line-based transport, so shutdown can wait for them.

The SDK cancels what it is serving when its read stream ends. "Stop accepting, give
in-flight calls a bounded grace period" therefore happens here: the line source asks
:class:`InFlight` to wait until every request it passed on has been answered (or the
grace period ends) before it reports EOF to the SDK.
"""

from __future__ import annotations

import trio

__all__ = ["InFlight"]

class InFlight:
    """Request ids read but not yet answered."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._idle = trio.Event()
        self._idle.set()

    def __len__(self) -> int:
        return len(self._ids)

    def started(self, token: str) -> None:
        self._ids.add(token)
        if self._idle.is_set():
            self._idle = trio.Event()

    def finished(self, token: str) -> None:
        self._ids.discard(token)
        if not self._ids:
            self._idle.set()

    async def wait_idle(self) -> None:
        """Return once nothing is in flight."""
        while self._ids:
            await self._idle.wait()
