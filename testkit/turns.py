"""How many times another task runs while an action does: a test of schedule points.

trio runs another task only at a schedule point, so a task started just before an action
and looping on ``checkpoint()`` counts the action's schedule points, whatever the
machine's speed (no timing: the count is the same on a slow, busy machine).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["turns_of_others_during"]


async def turns_of_others_during(action: Callable[[], Awaitable[object]]) -> int:
    """How many times a task started just before ``action`` ran before ``action`` returned
    (after one turn of its own, so it is running when ``action`` starts)."""
    turns = 0

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(other)
        await trio.lowlevel.checkpoint()  # other has run once
        seen = turns
        await action()
        done = turns
        nursery.cancel_scope.cancel()
    return done - seen
