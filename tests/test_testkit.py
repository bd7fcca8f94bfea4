"""The shared test helpers: text_of reads a tool result, stop_process ends a child that ignores SIGTERM,
held_clock keeps virtual time still while a worker thread runs."""

from __future__ import annotations

import sys
import time

import pytest
import trio
from mcp.types import CallToolResult, ImageContent, TextContent

from testkit.clock import held_clock
from testkit.processes import stop_process
from testkit.results import text_of


def test_text_of_joins_the_text_blocks_and_refuses_none() -> None:
    """Text blocks are joined in order; other blocks are skipped; a result without text is an AssertionError."""
    image = ImageContent(type="image", data="", mime_type="image/png")
    two = CallToolResult(content=[TextContent(type="text", text="a"), image, TextContent(type="text", text="b")])
    assert text_of(two) == "ab"
    with pytest.raises(AssertionError):
        text_of(CallToolResult(content=[image]))


async def test_stop_process_kills_a_child_that_ignores_sigterm() -> None:
    """A child that ignores SIGTERM is killed once the grace period has passed (SIGKILL: returncode -9)."""
    code = "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    process = await trio.lowlevel.open_process([sys.executable, "-c", code], stdout=-1)
    assert process.stdout is not None
    assert (await process.stdout.receive_some()).startswith(b"ready")
    await stop_process(process, grace_s=0.2)
    assert process.returncode == -9
    await process.stdout.aclose()


def test_held_clock_does_not_jump_while_a_worker_thread_runs() -> None:
    """A thread that outlasts the autojump threshold many times over sees no virtual time pass; idle waits still jump."""
    seen: list[float] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep, 5.0)  # a deadline the clock could jump to
            await trio.to_thread.run_sync(time.sleep, 0.2)  # 20 thresholds of real time
            seen.append(trio.current_time())
            await trio.sleep(10.0)
            seen.append(trio.current_time())

    trio.run(main, clock=held_clock(autojump_threshold=0.01))
    assert seen == [0.0, 10.0]
