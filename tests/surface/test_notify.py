"""Change notifications and warnings through real MCP clients: in-process on virtual time, stdio and HTTP."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio
from mcp import Client
from mcp.types import (
    EmptyResult,
    LoggingMessageNotification,
    ResourceListChangedNotification,
    ResourceUpdatedNotification,
    SetLevelRequest,
    SetLevelRequestParams,
    SubscribeRequest,
    SubscribeRequestParams,
    UnsubscribeRequest,
    UnsubscribeRequestParams,
)

import ctxtrio
from ctxtrio._app import running_server
from ctxtrio._errors import StoreError
from ctxtrio._sdk.events import LOG_BURST
from ctxtrio._wiring import open_wiring
from testkit.clock import held_clock
from testkit.servers import server_params
from tests.transport.serving import http_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp.client.session import IncomingMessage

    from ctxtrio._wiring import Wiring


ROOT = Path(__file__).resolve().parents[2]
#: What DocumentService.changes answers: (version, changed since, those current, every document or None).
Changes = tuple[int, list[str], frozenset[str], frozenset[str] | None]


class Inbox:
    """The notifications a client received, with a way to wait for one."""

    def __init__(self) -> None:
        self.received: list[Any] = []
        self._arrived = trio.Event()

    async def __call__(self, message: IncomingMessage) -> None:
        self.received.append(message)
        self._arrived.set()
        self._arrived = trio.Event()

    async def wait_for(self, kind: type[Any], *, uri: str | None = None) -> Any:
        while True:
            for message in self.received:
                if isinstance(message, kind) and (uri is None or getattr(message.params, "uri", None) == uri):
                    self.received.remove(message)
                    return message
            await self._arrived.wait()

    def updated(self) -> list[str]:
        return [m.params.uri for m in self.received if isinstance(m, ResourceUpdatedNotification)]


async def _subscribe(client: Client, uri: str, *, stop: bool = False) -> None:
    """resources/subscribe (or unsubscribe) as a handshake client sends it (the SDK's helpers warn of 2026-07-28)."""
    if stop:
        await client.session.send_request(UnsubscribeRequest(params=UnsubscribeRequestParams(uri=uri)), EmptyResult)
    else:
        await client.session.send_request(SubscribeRequest(params=SubscribeRequestParams(uri=uri)), EmptyResult)


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that waits longer (0.1 s real) before jumping, and never while a worker thread runs
    (testkit.clock.held_clock): the watcher and the stores work in threads, which a loaded machine slows, and a 1 s
    deadline must count the watcher's looks, not thread latency. (A plain MockClock jumped to that deadline while a
    look ran past 0.1 s: with each look 0.15 s slower, 3 of these 7 tests failed.)"""
    return held_clock(autojump_threshold=0.1)


def _config(tmp_path: Path) -> ctxtrio.Config:
    return ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)


async def test_subscribers_hear_of_replaced_documents_and_changed_sessions(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """Handshake client: re-ingest, forget, append each announce their URI within 1 s; others stay quiet."""
    inbox = Inbox()
    async with (
        open_wiring(_config(tmp_path)) as ctx,
        running_server(ctx) as server,
        Client(server, mode="legacy", message_handler=inbox) as client,
    ):
        await ctx.documents.ingest(text="version one", doc_id="spec")
        await ctx.documents.ingest(text="other", doc_id="other")
        await ctx.sessions.append("work", "first")
        await client.list_resources()
        for uri in ("ctxtrio://docs/spec", "ctxtrio://docs/spec/chunks/0-3", "ctxtrio://sessions/work"):
            await _subscribe(client, uri)
        await trio.sleep(1)
        inbox.received.clear()
        await ctx.documents.ingest(text="version two", doc_id="spec")
        with trio.fail_after(1):
            await inbox.wait_for(ResourceUpdatedNotification, uri="ctxtrio://docs/spec")
            await inbox.wait_for(ResourceUpdatedNotification, uri="ctxtrio://docs/spec/chunks/0-3")
        await ctx.documents.ingest(text="changed", doc_id="other")  # not subscribed
        await ctx.sessions.append("work", "second")
        with trio.fail_after(1):
            await inbox.wait_for(ResourceUpdatedNotification, uri="ctxtrio://sessions/work")
        await _subscribe(client, "ctxtrio://docs/spec/chunks/0-3", stop=True)
        await ctx.documents.forget("spec")
        with trio.fail_after(1):
            await inbox.wait_for(ResourceUpdatedNotification, uri="ctxtrio://docs/spec")
            await inbox.wait_for(ResourceListChangedNotification)
        await trio.sleep(1)
        assert inbox.updated() == []  # nothing for "other", nor for the unsubscribed range


@asynccontextmanager
async def _two_clients(tmp_path: Path, inbox: Inbox) -> AsyncIterator[tuple[Wiring, Client, Client]]:
    """A server over tmp_path's data dir with two clients: a handshake one whose notifications go to ``inbox``, and
    a 2026-07-28 one (listen streams)."""
    async with (
        open_wiring(_config(tmp_path)) as ctx,
        running_server(ctx) as server,
        Client(server, mode="legacy", message_handler=inbox) as legacy,
        Client(server) as modern,
    ):
        yield ctx, legacy, modern


async def test_list_changes_reach_handshake_and_listen_clients(tmp_path: Path, clock: trio.testing.MockClock) -> None:
    """A new document or session: list_changed to a handshake client and on a 2026-07-28 listen stream."""
    inbox = Inbox()
    async with _two_clients(tmp_path, inbox) as (ctx, legacy, modern):
        assert modern.protocol_version == "2026-07-28"
        await legacy.list_resources()
        async with modern.listen(resources_list_changed=True, resource_subscriptions=["ctxtrio://docs/d"]) as stream:
            await ctx.documents.ingest(text="new", doc_id="d")  # comes into being: updated, and the list changed
            with trio.fail_after(1):
                await inbox.wait_for(ResourceListChangedNotification)
                first = {type(await stream.__anext__()).__name__ for _ in range(2)}
            await ctx.documents.ingest(text="newer", doc_id="d")
            await ctx.sessions.open("fresh")
            with trio.fail_after(1):
                events = {type(await stream.__anext__()).__name__ for _ in range(2)}
                await inbox.wait_for(ResourceListChangedNotification)
        assert first == {"ResourceUpdated", "ResourcesListChanged"}
        assert events == {"ResourceUpdated", "ResourcesListChanged"}


async def test_a_session_changed_right_after_a_subscription_is_announced(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """resources/subscribe or a listen stream, then at once context_append (no look of the watcher in between): both
    clients hear of it. Before, the watcher's next look took the appended journal as its first stamp, and never told."""
    inbox = Inbox()
    async with _two_clients(tmp_path, inbox) as (ctx, legacy, modern):
        assert not (await legacy.call_tool("context_append", {"session_id": "work", "text": "one"})).is_error
        await _subscribe(legacy, "ctxtrio://sessions/work")
        async with modern.listen(resource_subscriptions=["ctxtrio://sessions/work"]) as stream:
            subscribed = trio.current_time()
            assert not (await modern.call_tool("context_append", {"session_id": "work", "text": "two"})).is_error
            assert trio.current_time() == subscribed  # the held clock stood still: no look in between
            with trio.fail_after(1):
                event = await stream.__anext__()
                await inbox.wait_for(ResourceUpdatedNotification, uri="ctxtrio://sessions/work")
        assert type(event).__name__ == "ResourceUpdated"


async def test_the_watcher_is_handed_every_document_only_at_its_first_look(
    tmp_path: Path, clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Among 20 documents, an add, a replace and a forget each reach the watcher as the one document changed (no listing
    of all 20 at each look: 3-5 s of the loop a minute at 20,000); the add and the forget change the list, the replace not."""
    inbox = Inbox()
    async with open_wiring(_config(tmp_path)) as ctx:
        for n in range(20):
            await ctx.documents.ingest(text=f"text {n}", doc_id=f"d{n:02d}")
        real = ctx.documents.changes
        handed: list[tuple[list[str], int | None]] = []

        async def counted(since: int | None) -> Changes:
            found = await real(since)
            handed.append((found[1], None if found[3] is None else len(found[3])))
            return found

        monkeypatch.setattr(ctx.documents, "changes", counted)
        async with running_server(ctx) as server, Client(server, mode="legacy", message_handler=inbox) as client:
            await client.list_resources()
            await trio.sleep(1)
            await ctx.documents.ingest(text="changed", doc_id="d03")
            await trio.sleep(1)
            assert not [m for m in inbox.received if isinstance(m, ResourceListChangedNotification)]
            for change in (ctx.documents.ingest(text="new", doc_id="new"), ctx.documents.forget("d07")):
                await change
                with trio.fail_after(1):
                    await inbox.wait_for(ResourceListChangedNotification)
    assert handed[0][1] == 20  # the first look: every document
    assert [changed for changed, listed in handed[1:]] == [["d03"], ["new"], ["d07"]]
    assert {listed for _, listed in handed[1:]} == {None}


async def test_warnings_reach_clients_that_asked_masked_and_rate_limited(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """After logging/setLevel, warnings arrive as notifications/message without secrets; a burst is cut to LOG_BURST."""
    inbox, quiet = Inbox(), Inbox()
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False, llm_api_key="sk-very-secret")
    async with (
        open_wiring(config) as ctx,
        running_server(ctx) as server,
        Client(server, mode="legacy", message_handler=inbox) as client,
        Client(server, mode="legacy", message_handler=quiet) as other,
    ):
        await other.list_resources()
        await client.session.send_request(SetLevelRequest(params=SetLevelRequestParams(level="warning")), EmptyResult)
        log = logging.getLogger("ctxtrio.llm.client")
        log.info("an info line is not sent")
        log.warning("LLM down: key sk-very-secret, header Bearer abc123 rejected")
        with trio.fail_after(1):
            message = await inbox.wait_for(LoggingMessageNotification)
        assert message.params.level == "warning" and message.params.logger == "ctxtrio.llm.client"
        assert "sk-very-secret" not in message.params.data and "abc123" not in message.params.data
        for i in range(50):
            log.error("burst %d", i)
        await trio.sleep(0.1)
        burst = [m for m in inbox.received if isinstance(m, LoggingMessageNotification)]
        assert len(burst) == LOG_BURST - 1 and burst[0].params.level == "error"
        await trio.sleep(5)
        log.warning("after the burst")
        with trio.fail_after(1):
            later = await inbox.wait_for(LoggingMessageNotification)
            while "after the burst" not in later.params.data:
                later = await inbox.wait_for(LoggingMessageNotification)
        assert "not sent: rate limit" in later.params.data
    assert not [m for m in quiet.received if isinstance(m, LoggingMessageNotification)]


async def _replace_and_wait(client: Client, inbox: Inbox) -> float:
    """Subscribe to a document, replace it with doc_ingest; seconds until the update arrived."""
    assert not (await client.call_tool("doc_ingest", {"text": "one", "doc_id": "spec"})).is_error
    await _subscribe(client, "ctxtrio://docs/spec")
    started = trio.current_time()
    assert not (await client.call_tool("doc_ingest", {"text": "two", "doc_id": "spec"})).is_error
    with trio.fail_after(20):
        await inbox.wait_for(ResourceUpdatedNotification, uri="ctxtrio://docs/spec")
    return trio.current_time() - started


async def test_stdio_subscriber_hears_of_a_replaced_document(tmp_path: Path) -> None:
    """Over stdio (a real subprocess), doc_ingest replacing a subscribed document sends resources/updated."""
    inbox = Inbox()
    params = server_params(tmp_path / "data", cache=tmp_path / "cache")
    with trio.fail_after(60):
        async with Client(params, mode="legacy", message_handler=inbox) as client:
            print(f"stdio: updated after {await _replace_and_wait(client, inbox):.3f} s")


# The SDK client leaves its SSE response generators (GET stream, listen stream) to the
# garbage collector when it closes; those ResourceWarnings are the client's, not the server's.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_http_subscriber_hears_of_a_replaced_document(tmp_path: Path) -> None:
    """Over Streamable HTTP: a handshake client (its GET stream) and a 2026-07-28 listen stream both hear it."""
    inbox = Inbox()
    async with http_server(tmp_path / "data") as running:
        with trio.fail_after(60):
            async with Client(running.mcp_url, mode="legacy", message_handler=inbox) as client:
                print(f"http: updated after {await _replace_and_wait(client, inbox):.3f} s")
            async with Client(running.mcp_url) as modern:
                assert modern.protocol_version == "2026-07-28"
                async with modern.listen(resource_subscriptions=["ctxtrio://docs/spec"]) as stream:
                    assert not (await modern.call_tool("doc_ingest", {"text": "three", "doc_id": "spec"})).is_error
                    with trio.fail_after(20):
                        event = await stream.__anext__()
                    assert type(event).__name__ == "ResourceUpdated"


async def test_changes_by_another_process_are_announced(tmp_path: Path, clock: trio.testing.MockClock) -> None:
    """A second context on the same data dir (as another server process would) re-ingests and appends: both announced."""
    inbox = Inbox()
    async with open_wiring(_config(tmp_path)) as ctx, running_server(ctx) as server:
        await ctx.documents.ingest(text="one", doc_id="shared")
        await ctx.sessions.append("team", "first")
        async with Client(server, mode="legacy", message_handler=inbox) as client:
            await _subscribe(client, "ctxtrio://docs/shared")
            await _subscribe(client, "ctxtrio://sessions/team")
            await trio.sleep(1)
            async with ctxtrio.open_context(_config(tmp_path)) as other:
                await other.documents.ingest(text="two", doc_id="shared")
                await other.sessions.append("team", "second")
                with trio.fail_after(1):
                    await inbox.wait_for(ResourceUpdatedNotification, uri="ctxtrio://docs/shared")
                    await inbox.wait_for(ResourceUpdatedNotification, uri="ctxtrio://sessions/team")


async def test_an_unreadable_store_pauses_notifications_not_the_server(
    tmp_path: Path, clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A catalog that cannot be read is one warning; the watcher and the server go on and announce once it reads again."""
    inbox = Inbox()
    async with open_wiring(_config(tmp_path)) as ctx, running_server(ctx) as server:
        await ctx.documents.ingest(text="one", doc_id="d")
        real = ctx.documents.changes
        broken = True

        async def flaky(since: int | None) -> Changes:
            if broken:
                raise StoreError("catalog unreadable (test)")
            return await real(since)

        monkeypatch.setattr(ctx.documents, "changes", flaky)
        async with Client(server, mode="legacy", message_handler=inbox) as client:
            await _subscribe(client, "ctxtrio://docs/d")
            await ctx.documents.ingest(text="two", doc_id="d")
            await trio.sleep(2)
            assert [r.message for r in caplog.records].count(
                "change notifications paused: catalog unreadable (test)"
            ) == 1
            assert not (await client.call_tool("context_guide", {})).is_error
            broken = False
            with trio.fail_after(1):
                await inbox.wait_for(ResourceUpdatedNotification, uri="ctxtrio://docs/d")
