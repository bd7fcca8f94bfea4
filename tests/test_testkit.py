"""The shared test helpers: text_of reads a tool result, stop_process ends a child that ignores SIGTERM."""

from __future__ import annotations

import sys

import pytest
import trio
from mcp.types import CallToolResult, ImageContent, TextContent

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
