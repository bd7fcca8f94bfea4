"""Tool handlers that never finish on their own, for the tests of what cancels a call (audit, shutdown grace)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from ctxtrio.tools.spec import Hints, Tool

if TYPE_CHECKING:
    from ctxtrio._wiring import Wiring
    from ctxtrio.tools.results import ToolResult
    from ctxtrio.tools.spec import Args, Call


async def forever(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    """A handler that waits on its own, for ever (an ingest far longer than any deadline)."""
    await trio.sleep_forever()
    raise AssertionError("not reached")


async def forever_in_a_nursery(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    """The same, waiting in a nursery as the summarizing tools do (a cancel comes out in a group)."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.sleep_forever)
        await trio.sleep_forever()
    raise AssertionError("not reached")


def read_only_tool(name: str, handler: object) -> Tool:
    """A read-only tool called ``name`` that runs ``handler``, with no parameters."""
    return Tool(name, name, "a test tool", (), handler, Hints(read_only=True))  # type: ignore[arg-type]
