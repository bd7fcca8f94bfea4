"""Tracking requests in flight on a line transport."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

import trio
import trio.testing

from ctxtrio.transport.inflight import InFlight
from ctxtrio.transport.messages import peek

if TYPE_CHECKING:
    import pytest


def test_peek_kinds() -> None:
    """Requests, notifications and responses are told apart, ids kept as JSON text."""
    assert peek('{"jsonrpc":"2.0","id":7,"method":"tools/call"}').kind == "request"
    assert peek('{"jsonrpc":"2.0","id":"a","method":"x"}').id == '"a"'
    assert peek('{"jsonrpc":"2.0","method":"notifications/initialized"}').kind == "notification"
    assert peek('{"jsonrpc":"2.0","id":7,"result":{}}').kind == "response"
    assert peek("not json").kind == "other"


def test_peek_large_message_reads_only_the_head() -> None:
    """A multi-megabyte request is recognised from its head without parsing the body."""
    body = {"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": {"text": "x" * (3 << 20)}}
    seen = peek(json.dumps(body))
    assert (seen.kind, seen.id, seen.message) == ("request", "42", None)


async def test_wait_idle_returns_when_last_request_answered(autojump_clock: trio.testing.MockClock) -> None:
    """wait_idle blocks while a request is in flight and returns when it is answered."""
    inflight = InFlight()
    inflight.started("1")
    inflight.started("2")
    done_at: list[float] = []

    async def waiter() -> None:
        await inflight.wait_idle()
        done_at.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiter)
        await trio.sleep(1)
        inflight.finished("1")
        await trio.sleep(1)
        assert done_at == []
        inflight.finished("2")
    assert done_at == [2.0]


def test_response_id_reads_the_sdk_prefix_only() -> None:
    """A response as the SDK writes it gives its id without parsing the result."""
    from ctxtrio._sdk import response_id

    assert response_id('{"jsonrpc":"2.0","id":12,"result":' + '{"x":"' + "y" * 100000 + '"}}') == "12"
    assert response_id('{"jsonrpc":"2.0","id":"a\\"b","error":{}}') == '"a\\"b"'
    assert response_id('{"jsonrpc":"2.0","method":"notifications/progress"}') is None


def test_peek_finds_an_id_after_the_head() -> None:
    """A large request whose top-level id comes last is a request with that id; nested ids do not count."""
    call = {"name": "doc_ingest", "arguments": {"id": 3, "text": '"id": 4 ' + "x" * 100_000}}
    line = json.dumps({"method": "tools/call", "params": call, "jsonrpc": "2.0", "id": "req-9"})
    assert (peek(line).kind, peek(line).id) == ("request", '"req-9"')
    nested_first = json.dumps({"params": {"id": 1, "text": "y" * 100_000}, "jsonrpc": "2.0", "method": "m", "id": 2})
    assert peek(nested_first).id == "2"


def test_peek_never_raises_on_hostile_lines() -> None:
    """Deep nesting and bad escapes, small or large, are "other", not an exception."""
    for line in ("[" * 30000, "{" * 70000 + "}" * 70000, '{"id":"\\x","method":"m","p":"' + "y" * 70000 + '"}'):
        assert peek(line).kind == "other"


def test_cancelled_request_is_no_longer_in_flight() -> None:
    """notifications/cancelled takes its request out of the in-flight set, whether the id is 6 or "6"."""
    from ctxtrio.transport.stdio import Traffic

    traffic = Traffic()
    traffic.incoming('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}}')
    traffic.incoming('{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{}}')
    assert len(traffic.inflight) == 2
    traffic.incoming('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"6"}}')
    traffic.incoming('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}')
    assert len(traffic.inflight) == 0


async def _settled(inflight: InFlight, caplog: pytest.LogCaptureFixture) -> tuple[float, list[str]]:
    """settle(0.5, 2.0) on ``inflight``: when it returned (virtual seconds) and what it logged."""
    began = trio.current_time()
    with caplog.at_level(logging.WARNING, logger="ctxtrio"):
        await inflight.settle(0.5, 2.0)
    return trio.current_time() - began, [record.getMessage() for record in caplog.records]


async def test_settle_names_the_time_it_waited_for_what_stays_in_flight(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A request never answered: settle waits the grace and the moment kept for answers, 2.5 s, and says that
    (before: '... still in flight after 0.5 s', the grace alone, though it had waited 2.5 s)."""
    inflight = InFlight()
    inflight.started("1")
    waited_s, logged = await _settled(inflight, caplog)
    assert waited_s == 2.5
    assert logged == [
        "1 request(s) still in flight after 2.5 s (the shutdown grace, 0.5 s, and 2 s kept for answers): "
        "cancelling them"
    ]


async def test_settle_returns_when_the_last_request_is_answered(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A request answered 1 s in, within the 2.5 s: settle returns then, and logs nothing."""
    inflight = InFlight()
    inflight.started("1")
    async with trio.open_nursery() as nursery:

        async def answer() -> None:
            await trio.sleep(1.0)
            inflight.finished("1")

        nursery.start_soon(answer)
        waited_s, logged = await _settled(inflight, caplog)
    assert (waited_s, logged) == (1.0, [])
