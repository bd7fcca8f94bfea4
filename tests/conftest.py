"""Fixtures shared by every test package."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from testkit.clock import held_clock

if TYPE_CHECKING:
    import trio.testing


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time for the tests that ask for it (pytest-trio runs them on it): it jumps when
    every task waits and no worker thread runs, after a small real threshold for loopback I/O.

    A module that needs another threshold defines its own ``clock``.
    """
    return held_clock(autojump_threshold=0.02)
