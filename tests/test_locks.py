"""Held: a free lock or limiter is taken without a schedule point; a held one is waited for."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from ctxtrio._locks import Held


async def test_a_free_lock_is_taken_without_a_checkpoint() -> None:
    """``async with Held(lock)`` on a free lock neither yields nor leaves the lock held."""
    lock = trio.Lock()
    with trio.testing.assert_no_checkpoints():
        async with Held(lock):
            assert lock.locked()
    assert not lock.locked()


async def test_a_held_lock_is_waited_for() -> None:
    """Another task's lock is waited for (a checkpoint) and taken once released."""
    lock = trio.Lock()
    order: list[str] = []

    async def other(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with lock:
            task_status.started()
            await trio.sleep(1)
            order.append("other")

    async with trio.open_nursery() as nursery:
        await nursery.start(other)
        with trio.testing.assert_checkpoints():
            async with Held(lock):
                order.append("held")
    assert order == ["other", "held"]


async def test_a_limiter_is_released_when_the_body_fails() -> None:
    """A CapacityLimiter's token goes back when the body raises."""
    limiter = trio.CapacityLimiter(1)
    with pytest.raises(ValueError, match="body"):
        async with Held(limiter):
            assert limiter.borrowed_tokens == 1
            raise ValueError("body")
    assert limiter.borrowed_tokens == 0


async def test_cancelled_while_waiting_holds_nothing() -> None:
    """A wait cancelled before the lock is free takes nothing: its holder still has it."""
    lock = trio.Lock()
    release = trio.Event()
    entered: list[str] = []

    async def other(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with lock:
            task_status.started()
            await release.wait()

    async with trio.open_nursery() as nursery:
        await nursery.start(other)
        with trio.move_on_after(1) as scope:
            async with Held(lock):
                entered.append("body")
        assert scope.cancelled_caught and entered == []
        assert lock.locked() and lock.statistics().owner is not trio.lowlevel.current_task()
        release.set()
    assert not lock.locked()
