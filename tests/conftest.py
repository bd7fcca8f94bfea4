"""Fixtures shared by every test package."""

from __future__ import annotations

import pytest
import trio.testing


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time for the tests that ask for it (pytest-trio runs them on it): it jumps when
    every task waits, after a small real threshold so loopback I/O and worker threads finish first.

    A module that needs another threshold defines its own ``clock``.
    """
    return trio.testing.MockClock(autojump_threshold=0.02)
