"""A resources/read or prompts/get still running when the shutdown grace ends is answered, as a tool call is."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import ReadResourceResult, TextResourceContents

import ctxtrio
from ctxtrio._app import running_server
from ctxtrio._wiring import open_wiring
from ctxtrio.docs.service import DocumentService
from ctxtrio.memory.service import SessionService
from ctxtrio.tools.stopping import Stopping

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path


INTERNAL_ERROR = -32603

#: How long the slowed reads take: far past any grace the tests give (a cold load of a large journal from a
#: slow disk; the services' own reads run after the wait, so what comes back is what they return).
SLOW_S = 60.0


def _slowed(monkeypatch: pytest.MonkeyPatch, cls: type, name: str, wait_s: float = SLOW_S) -> None:
    """``cls.name`` (a real service read) waits ``wait_s`` before it reads."""
    read: Callable[..., Awaitable[object]] = getattr(cls, name)

    async def slow(*args: object, **kwargs: object) -> object:
        await trio.sleep(wait_s)
        return await read(*args, **kwargs)

    monkeypatch.setattr(cls, name, slow)


async def _asked_while_stopping(
    tmp_path: Path, ask: Callable[[Client], Awaitable[object]], *, stop_s: float, grace_s: float
) -> tuple[MCPError | object, float]:
    """Ask through a real MCP client (in-process), stop the server ``stop_s`` in with ``grace_s``; the answer (an
    MCPError for an error response) and when it came (virtual seconds)."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    answers: list[tuple[MCPError | object, float]] = []
    async with open_wiring(config) as ctx:
        await ctx.documents.ingest(text="# Setup\n\nInstall it.\n\n# Usage\n\nRun it.", title="Manual", doc_id="man")
        await ctx.sessions.append("work", "Goal: keep cookies", pinned=True)
        stopping = Stopping()
        async with running_server(ctx, stopping) as server, Client(server) as client:
            began = trio.current_time()

            async def asking() -> None:
                try:
                    answer: MCPError | object = await ask(client)
                except MCPError as exc:
                    answer = exc
                answers.append((answer, trio.current_time() - began))

            with trio.fail_after(SLOW_S * 2):  # an answer that never comes fails the test instead of hanging it
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(asking)
                    await trio.sleep(stop_s)
                    stopping.stop_within(grace_s)
    ((answer, at_s),) = answers
    return answer, at_s


async def test_a_resource_read_past_the_grace_is_answered_that_the_server_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: trio.testing.MockClock
) -> None:
    """Stopped 0.5 s into a slow resources/read with 2 s of grace: at 2.5 s an error response says the server is
    stopping and to read the URI again (before: the read ran on, and the transport cut it off unanswered)."""
    _slowed(monkeypatch, DocumentService, "outline")
    answer, at_s = await _asked_while_stopping(
        tmp_path, lambda client: client.read_resource("ctxtrio://docs/man"), stop_s=0.5, grace_s=2.0
    )
    assert isinstance(answer, MCPError), answer
    assert (answer.code, at_s, answer.data) == (INTERNAL_ERROR, 2.5, {"uri": "ctxtrio://docs/man"})
    assert answer.message == (
        "not done: the server is stopping, and this request did not finish within its shutdown grace "
        "(2 s, --shutdown-grace); read ctxtrio://docs/man again once the server is back"
    )


async def test_a_prompt_past_the_grace_is_answered_that_the_server_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: trio.testing.MockClock
) -> None:
    """prompts/get of resume_session (which reads the session), slow, under way as the server starts stopping with
    2 s of grace: cut off at the grace's end and answered that the server is stopping."""
    _slowed(monkeypatch, SessionService, "status")
    answer, at_s = await _asked_while_stopping(
        tmp_path,
        lambda client: client.get_prompt("resume_session", {"session_id": "work"}),
        stop_s=0.0,
        grace_s=2.0,
    )
    assert isinstance(answer, MCPError), answer
    assert (answer.code, at_s) == (INTERNAL_ERROR, 2.0)
    assert answer.message.startswith("not done: the server is stopping, and this request did not finish"), answer
    assert answer.message.endswith("get prompt 'resume_session' again once the server is back"), answer


async def test_a_resource_list_past_the_grace_is_answered_that_the_server_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: trio.testing.MockClock
) -> None:
    """A slow resources/list, stopped with 1 s of grace, is answered at 1 s that the server is stopping."""
    _slowed(monkeypatch, DocumentService, "list_documents")
    answer, at_s = await _asked_while_stopping(
        tmp_path, lambda client: client.list_resources(), stop_s=0.0, grace_s=1.0
    )
    assert isinstance(answer, MCPError), answer
    assert (answer.code, at_s) == (INTERNAL_ERROR, 1.0)
    assert answer.message.endswith("(1 s, --shutdown-grace); list the resources again once the server is back")


async def test_a_resource_read_within_the_grace_is_answered_as_usual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: trio.testing.MockClock
) -> None:
    """A read that needs 1 s, under way when the server starts stopping with 2 s of grace, answers its text at 1 s."""
    _slowed(monkeypatch, DocumentService, "outline", 1.0)
    answer, at_s = await _asked_while_stopping(
        tmp_path, lambda client: client.read_resource("ctxtrio://docs/man"), stop_s=0.0, grace_s=2.0
    )
    assert isinstance(answer, ReadResourceResult), answer
    (content,) = answer.contents
    assert isinstance(content, TextResourceContents) and 'man "Manual": 1 chunk' in content.text, content
    assert at_s == 1.0


async def test_listen_streams_end_when_the_server_starts_to_stop(tmp_path: Path, clock: trio.testing.MockClock) -> None:
    """A 2026-07-28 listen stream ends with its result as the stop begins, not at the grace's end (5 s here) nor
    cut off then; a listen asked for after the stop is refused, saying why."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    stopping = Stopping()
    async with open_wiring(config) as ctx, running_server(ctx, stopping) as server, Client(server) as client:
        with trio.fail_after(60):
            async with client.listen(resources_list_changed=True) as stream:
                began = trio.current_time()
                stopping.stop_within(5.0)
                events = [event async for event in stream]
            ended_s = trio.current_time() - began
            with pytest.raises(MCPError) as refused:
                async with client.listen(resources_list_changed=True):
                    pass
    assert (events, ended_s) == ([], 0.0)
    assert (refused.value.code, refused.value.message) == (
        INTERNAL_ERROR,
        "the server is stopping: listen again once it is back",
    )


async def test_a_listen_that_starts_after_a_stop_that_takes_no_more_requests_ends_with_its_result(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """When the transport took its last request before the stop (stdio: its reader ended), a listen whose handler
    starts after the stop was asked before it: acknowledged, then ended with its result at once, not refused. (The
    hub closes its stream as the SDK's handler registers it, through ListenHandler._streams: were that moved, the
    stream would stay open and this test fail on its ceiling.)"""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    stopping = Stopping()
    async with open_wiring(config) as ctx, running_server(ctx, stopping) as server, Client(server) as client:
        stopping.stop_within(5.0, accepting=False)
        began = trio.current_time()
        with trio.fail_after(60):
            async with client.listen(resources_list_changed=True) as stream:
                events = [event async for event in stream]
        ended_s = trio.current_time() - began
    assert (events, ended_s) == ([], 0.0)
