"""Tracking requests in flight on a line transport."""

from __future__ import annotations

import json

import trio
import trio.testing

from ctxtrio.transport.inflight import InFlight
from ctxtrio.transport.messages import peek


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
