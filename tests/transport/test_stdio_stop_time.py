"""The stdio server's stop waits on no timer: with nothing in flight, stdin's EOF and SIGTERM stop it in no time
on its own clock. The server runs in-process on a clock that stands still (pytest-trio's ``mock_clock``), so a
step of the stop that waited for a time (its grace, a timeout, a sleep) would wait for ever; a watchdog thread
moves the clock an hour on after 300 real seconds, so such a wait ends and the test fails saying so.

The hosts' clock is real: the SDK's stdio client closes stdin, waits 2 s (``PROCESS_TERMINATION_TIMEOUT``), then
sends SIGTERM and after 2 s more SIGKILL. What this cannot see (the CPU and disk work of a stop on a busy
machine) is measured, not asserted: ``python stress/attack.py stop``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import TYPE_CHECKING, Any

import trio
import trio.testing

import ctxtrio
from ctxtrio import _app
from ctxtrio.transport.stdio import serve_stdio

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import pytest
    from mcp.server.lowlevel import Server

    from ctxtrio.transport.stdio import CancellableLines, Traffic

#: Real seconds before the watchdog moves the clock on: only a hang guard (an in-process start and stop takes
#: well under a second of CPU).
WATCHDOG_S = 300.0
#: How far the watchdog moves the clock: past any timer of the stop (the grace is 5 s by default).
JUMP_S = 3600.0


@contextlib.contextmanager
def _watchdog(clock: trio.testing.MockClock) -> Iterator[list[bool]]:
    """After :data:`WATCHDOG_S` real seconds, move ``clock`` :data:`JUMP_S` on (in the trio thread); the list
    yielded holds True once it did."""
    fired: list[bool] = []
    token = trio.lowlevel.current_trio_token()

    def jump() -> None:
        fired.append(True)
        clock.jump(JUMP_S)

    def fire() -> None:
        with contextlib.suppress(trio.RunFinishedError):
            token.run_sync_soon(jump)

    timer = threading.Timer(WATCHDOG_S, fire)
    timer.start()
    try:
        yield fired
    finally:
        timer.cancel()


def _config(tmp_path: Path) -> ctxtrio.Config:
    return ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False, warm_start=False)


async def test_stdin_eof_stops_the_server_in_no_time_on_its_clock(
    tmp_path: Path, mock_clock: trio.testing.MockClock, capfd: pytest.CaptureFixture[str]
) -> None:
    """stdin at EOF from the start: serve() starts, stops and returns without its clock moving, and writes
    nothing to stdout."""
    read_fd, write_fd = os.pipe()
    os.close(write_fd)
    began = trio.current_time()
    try:
        with _watchdog(mock_clock) as fired:
            await _app.serve(_config(tmp_path), stdin_fd=read_fd)
    finally:
        os.close(read_fd)
    assert not fired, "the stop waited on a timer (or took 300 real seconds)"
    assert trio.current_time() == began
    assert capfd.readouterr().out == ""


async def test_sigterm_stops_the_server_in_no_time_on_its_clock(
    tmp_path: Path,
    mock_clock: trio.testing.MockClock,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SIGTERM once it serves, stdin still open: serve() stops and returns without its clock moving (the stop
    neither waits out its grace nor the backstop deadline behind it)."""
    serving = trio.Event()

    async def serving_stdio(server: Server[Any], lines: CancellableLines, out_fd: int, traffic: Traffic) -> None:
        serving.set()  # called once the signal receiver is open and the server is ready
        await serve_stdio(server, lines, out_fd, traffic)

    monkeypatch.setattr(_app, "serve_stdio", serving_stdio)
    read_fd, write_fd = os.pipe()  # the host keeps stdin open
    try:
        with _watchdog(mock_clock) as fired:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lambda: _app.serve(_config(tmp_path), stdin_fd=read_fd))
                await serving.wait()
                began = trio.current_time()
                signal.raise_signal(signal.SIGTERM)
    finally:
        os.close(write_fd)
        os.close(read_fd)
    assert not fired, "the stop waited on a timer (or took 300 real seconds)"
    assert trio.current_time() == began
    assert capfd.readouterr().out == ""
