"""A call still running when the shutdown grace ends is answered that the server is stopping, not dropped."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

import trio
import trio.testing

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.store.handle import StoreHandle
from ctxtrio.tools.results import ToolResult, text_result
from ctxtrio.tools.runner import ToolRunner
from ctxtrio.tools.stopping import CutOff, Stopping
from ctxtrio.tools.table import TOOLS

from .handlers import forever, forever_in_a_nursery, read_only_tool

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from ctxtrio._wiring import Wiring
    from ctxtrio.store.results import AppendResult
    from ctxtrio.tools.spec import Args, Call, Tool


async def _a_second(ctx: Wiring, args: Args, call: Call) -> ToolResult:
    """A handler that finishes one second after it starts."""
    await trio.sleep(1.0)
    return text_result("done")


async def _run_stopped(
    tmp_path: Path, tool: Tool, *, start_s: float, stop_s: float, grace_s: float
) -> tuple[ToolResult, float, dict[str, object]]:
    """Start the call ``start_s`` in and stop the server ``stop_s`` in with ``grace_s``; the answer, when it came
    (virtual seconds), and the audit line."""
    stream = io.StringIO()
    answers: list[tuple[ToolResult, float]] = []
    async with open_wiring(Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        stopping = Stopping()
        runner = ToolRunner(ctx, [tool], audit=True, stream=stream, stopping=stopping)
        began = trio.current_time()

        async def call() -> None:
            await trio.sleep(start_s)
            answers.append((await runner.call(tool.name, {}), trio.current_time() - began))

        with trio.fail_after(60):  # a call never answered (as before) fails the test instead of hanging it
            async with trio.open_nursery() as nursery:
                nursery.start_soon(call)
                await trio.sleep(stop_s)
                stopping.stop_within(grace_s)
    ((result, at_s),) = answers
    (line,) = stream.getvalue().splitlines()
    audited: dict[str, object] = json.loads(line)
    return result, at_s, audited


async def test_a_call_past_the_grace_is_answered_that_the_server_stops(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Stopped 0.5 s into a call with a 2 s grace: at 2.5 s it answers, as an error naming the grace and saying to
    call again (before: the transport cancelled it with its connection, and the client got no answer at all)."""
    for handler in (forever, forever_in_a_nursery):
        result, at_s, audited = await _run_stopped(
            tmp_path, read_only_tool("doc_ingest", handler), start_s=0.0, stop_s=0.5, grace_s=2.0
        )
        assert at_s == 2.5
        assert result.is_error
        assert result.text == (
            "Error: not done: the server is stopping, and this call did not finish within its shutdown grace "
            "(2 s, --shutdown-grace); call doc_ingest again once the server is back"
        )
        assert audited["outcome"] == "cancelled"


async def test_a_call_started_after_the_stop_gets_what_is_left_of_the_grace(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A call that starts 1.5 s into a 2 s grace is cut off at the grace's end, 0.5 s later."""
    result, at_s, _ = await _run_stopped(
        tmp_path, read_only_tool("doc_ingest", forever), start_s=1.5, stop_s=0.0, grace_s=2.0
    )
    assert at_s == 2.0
    assert "the server is stopping" in result.text


async def test_a_call_that_ends_within_the_grace_is_answered_as_usual(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """A call that needs 1 s, stopped with 2 s of grace, gives its own answer at 1 s."""
    result, at_s, audited = await _run_stopped(
        tmp_path, read_only_tool("doc_ingest", _a_second), start_s=0.0, stop_s=0.1, grace_s=2.0
    )
    assert (result.text, result.is_error, at_s, audited["outcome"]) == ("done", False, 1.0, "ok")


async def test_a_write_cut_off_after_its_commit_does_not_say_it_was_not_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop lands while doc_ingest's commit is queued (shielded: it lands, then the cancel comes out of the
    call): the document is stored, so the answer must not say 'not done, call doc_ingest again', which for an
    inline text without doc_id stores it a second time under a new id. It says to look first."""
    async with open_wiring(Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        stopping = Stopping()
        runner = ToolRunner(ctx, TOOLS, audit=False, stopping=stopping)
        commit = StoreHandle.append_then

        async def stopped_meanwhile(*args: Any, **kwargs: Any) -> tuple[AppendResult, AppendResult]:
            stopping.stop_within(0)  # SIGTERM with --shutdown-grace 0, just as the commit is queued
            return await commit(*args, **kwargs)

        monkeypatch.setattr(StoreHandle, "append_then", stopped_meanwhile)
        result = await runner.call("doc_ingest", {"text": "Widgets are blue."})
        stored = await ctx.documents.list_documents()
    assert [info.title for info in stored] == ["Widgets are blue."]
    assert result.is_error and "the server is stopping" in result.text, result.text
    assert "not done" not in result.text and "may or may not have landed" in result.text, result.text
    assert result.text.endswith("look before you call doc_ingest again"), result.text


async def _after(wait_s: float, value: str | None) -> str | None:
    await trio.sleep(wait_s)
    return value


async def test_finish_gives_the_work_s_value_or_says_and_logs_that_the_grace_cut_it_off(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Stopping.finish, which ToolRunner and ServedSurface both run their work under (each timed and logged the
    cut-off itself, rvC25): work done in time gives its value, None too; work the grace cuts off gives CUT_OFF
    at the grace's end and one warning with its name, how long it ran and the grace; a cancel from outside
    passes through, unlogged."""
    stopping = Stopping()
    assert await stopping.finish("doc_search", _after(1.0, "found")) == "found"
    assert await stopping.finish("doc_search", _after(0.0, None)) is None
    answers: list[tuple[object, float]] = []
    began = trio.current_time()

    async def asking() -> None:
        answers.append((await stopping.finish("resources/read", _after(60.0, "late")), trio.current_time() - began))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(asking)
        await trio.sleep(0.5)
        stopping.stop_within(2.0)
    assert answers == [(CutOff.CUT_OFF, 2.5)]
    with trio.move_on_after(1.0):  # the deadline is past: a call started now is cut off at once
        assert await stopping.finish("context_recall", _after(1.0, "late")) is CutOff.CUT_OFF
    with trio.CancelScope() as outside:
        outside.cancel()
        await stopping.finish("doc_window", _after(0.0, "never"))
    assert outside.cancelled_caught
    warned = [r.getMessage() for r in caplog.records if r.name == "ctxtrio.tools"]
    assert warned == [
        "resources/read cancelled after 2.5 s: the shutdown grace (2 s) ran out; answered that the server stops",
        "context_recall cancelled after 0.0 s: the shutdown grace (2 s) ran out; answered that the server stops",
    ]
