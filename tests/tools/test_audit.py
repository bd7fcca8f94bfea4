"""The audit line says what happened to a call: ok, error, or cancelled (also through a nursery)."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

import trio
import trio.testing

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.tools.runner import ToolRunner

from .handlers import forever, forever_in_a_nursery, read_only_tool

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio.tools.spec import Tool


async def _audited_when_cancelled(tmp_path: Path, tool: Tool) -> dict[str, object]:
    stream = io.StringIO()
    async with open_wiring(Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        runner = ToolRunner(ctx, [tool], audit=True, stream=stream)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(runner.call, tool.name, {})
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()  # what the shutdown grace running out does to a call
    (line,) = stream.getvalue().splitlines()
    audited: dict[str, object] = json.loads(line)
    return audited


async def test_a_call_cancelled_inside_a_nursery_is_audited_cancelled(tmp_path: Path) -> None:
    """Cancelled while its handler waits in a nursery (a Cancelled inside an exception group): "cancelled", not "ok"."""
    audited = await _audited_when_cancelled(tmp_path, read_only_tool("waits_in_a_nursery", forever_in_a_nursery))
    assert (audited["tool"], audited["outcome"]) == ("waits_in_a_nursery", "cancelled")
    assert "error" not in audited


async def test_a_plain_cancelled_call_is_audited_cancelled(tmp_path: Path) -> None:
    """Cancelled while its handler waits directly: "cancelled"."""
    audited = await _audited_when_cancelled(tmp_path, read_only_tool("waits", forever))
    assert audited["outcome"] == "cancelled"
