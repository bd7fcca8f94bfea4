"""quick_tcp_server: hypercorn's connection send lock and keep-alive timer without needless yields."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import pytest
import trio
import trio.testing

from ctxtrio.transport.quick_connection import QuickSingleTask, quick_tcp_server
from testkit.turns import turns_of_others_during

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from hypercorn.typing import AppWrapper


class _Group:
    """The part of hypercorn's trio TaskGroup that a SingleTask uses: ``spawn`` into a nursery."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery

    def spawn(self, func: Callable[..., Awaitable[object]], *args: object) -> None:
        self.nursery.start_soon(func, *args)


async def test_the_servers_send_lock_is_taken_without_a_schedule_point() -> None:
    """quick_tcp_server's send lock, free, taken 20 times lets no other task run (hypercorn's trio.Lock would, 20 times);
    held, it is waited for."""
    from hypercorn.config import Config
    from hypercorn.trio.worker_context import WorkerContext

    left, _right = trio.testing.memory_stream_pair()
    # The app is only stored until a request comes, and none does here.
    server = quick_tcp_server(cast("AppWrapper", _no_app), Config(), WorkerContext(None), {}, left)
    lock = server.send_lock

    async def use() -> None:
        for _ in range(20):
            async with lock:
                pass

    assert await turns_of_others_during(use) == 0
    order: list[str] = []
    release = trio.Event()

    async def holder() -> None:
        async with lock:
            order.append("held")
            await release.wait()
        order.append("released")

    async def waiter() -> None:
        async with lock:
            order.append("taken")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(holder)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(waiter)
        await trio.testing.wait_all_tasks_blocked()
        assert order == ["held"]
        release.set()
    assert order == ["held", "released", "taken"]


async def _no_app(*args: object) -> None:
    raise AssertionError("no request is served here")


async def test_restart_and_stop_do_not_yield(autojump_clock: trio.testing.MockClock) -> None:
    """A keep-alive timer's restart and stop let no other task run."""
    single = QuickSingleTask()

    async def timer() -> None:
        await trio.sleep(5)

    async with trio.open_nursery() as nursery:
        group = _Group(nursery)

        async def cycle() -> None:
            for _ in range(10):
                await single.stop()
                await single.restart(group, timer)

        assert await turns_of_others_during(cycle) == 0
        await single.stop()


async def test_restart_cancels_the_running_timer(autojump_clock: trio.testing.MockClock) -> None:
    """The timer restarted at t=3 fires at t=8 (its 5 s), and the first one never does."""
    single = QuickSingleTask()
    fired: list[tuple[str, float]] = []

    def timer(name: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            await trio.sleep(5)
            fired.append((name, trio.current_time()))

        return run

    async with trio.open_nursery() as nursery:
        group = _Group(nursery)
        await single.restart(group, timer("first"))
        await trio.sleep(3)
        await single.restart(group, timer("second"))
    assert fired == [("second", 8.0)]


def _timer(seconds: float, fired: list[float]) -> Callable[[], Awaitable[None]]:
    """A keep-alive timer that sleeps ``seconds``, then notes when it fired in ``fired``."""

    async def timer() -> None:
        await trio.sleep(seconds)
        fired.append(trio.current_time())

    return timer


async def test_stop_right_after_restart_cancels_a_timer_not_yet_started(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """stop() before the new timer's task first ran still cancels it: it never fires."""
    single = QuickSingleTask()
    fired: list[float] = []
    timer = _timer(5, fired)

    async with trio.open_nursery() as nursery:
        await single.restart(_Group(nursery), timer)
        await single.stop()
    assert fired == []
    assert trio.current_time() == 0.0


@pytest.mark.parametrize("method", ["restart", "stop"])
async def test_a_cancelled_caller_changes_nothing(method: str, autojump_clock: trio.testing.MockClock) -> None:
    """Inside a cancelled scope, restart and stop raise Cancelled and leave the running timer alone."""
    single = QuickSingleTask()
    fired: list[float] = []
    timer = _timer(5, fired)

    async with trio.open_nursery() as nursery:
        group = _Group(nursery)
        await single.restart(group, timer)
        with trio.CancelScope() as scope:
            scope.cancel()
            if method == "restart":
                await single.restart(group, timer)
            else:
                await single.stop()
        assert scope.cancelled_caught
    assert fired == [5.0]
