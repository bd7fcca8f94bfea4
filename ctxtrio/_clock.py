"""The clock of blocking code in worker threads, where ``trio.current_time()`` is not available.

Trio code reads time from trio (so ``MockClock`` drives it in tests). The store's
retry and lock waits run in worker threads; they take a :class:`ThreadClock` instead of
calling ``time.monotonic``/``time.sleep`` themselves, so a test can drive them with a
fake clock and no real waiting. :data:`SYSTEM_CLOCK` is the real one.
"""

from __future__ import annotations

import time
from typing import Final, Protocol

__all__ = ["SYSTEM_CLOCK", "SystemClock", "ThreadClock"]


class ThreadClock(Protocol):
    """Monotonic seconds and a blocking sleep, for code that runs in a worker thread."""

    def now(self) -> float:
        """Seconds on a monotonic clock (only differences mean anything)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block the calling thread for ``seconds``."""
        ...


class SystemClock:
    """The machine's monotonic clock and ``time.sleep``."""

    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


SYSTEM_CLOCK: Final[ThreadClock] = SystemClock()
