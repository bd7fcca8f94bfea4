"""The Gate's body deadlines in virtual time: a silent or trickling body gets 408 and gives back its budget."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import trio
import trio.testing

from ctxtrio.transport.http import MIN_BODY_BYTES_PER_S, Gate

Message = MutableMapping[str, Any]


def _scope(length: int | None) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1:1")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}


class _Client:
    """An ASGI client side: ``receive`` yields body parts on a schedule, ``send`` records answers.

    It models the ASGI HTTP spec's receive: each ``http.request`` message carries ``body``
    and ``more_body`` (https://asgi.readthedocs.io/en/latest/specs/www.html#request-receive-event).
    """

    def __init__(self, parts: list[tuple[float, bytes]]) -> None:
        self.parts = parts
        self.sent: list[Message] = []

    async def receive(self) -> Message:
        if not self.parts:
            await trio.sleep_forever()
        delay, body = self.parts.pop(0)
        await trio.sleep(delay)
        return {"type": "http.request", "body": body, "more_body": True}  # never the last part

    async def send(self, message: Message) -> None:
        self.sent.append(message)


async def _never_called(scope: Any, receive: Any, send: Any) -> None:
    raise AssertionError("the app must not see a body that never arrived")


async def test_silent_body_times_out_and_releases_the_budget(autojump_clock: trio.testing.MockClock) -> None:
    """A large body that stops arriving is answered 408 after exactly body_timeout_s; its budget is free again."""
    gate = Gate(_never_called, host="127.0.0.1", token=None, max_body_bytes=10 << 20, body_timeout_s=3.0)
    client = _Client([(0.0, b"{")])
    started = trio.current_time()
    await gate(_scope(1 << 20), client.receive, client.send)
    assert trio.current_time() - started == 3.0
    assert client.sent[0]["status"] == 408
    assert gate._buffer._used == 0


async def test_trickled_body_is_cut_once_it_falls_below_the_minimum_rate(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """100 bytes every 2 s under a declared 10 MB never trips the 3 s per-read timeout, but falls
    behind the minimum rate: 408 within the grace plus one part (before: after 3 s + 10 MB at the rate, 43 s)."""
    gate = Gate(_never_called, host="127.0.0.1", token=None, max_body_bytes=10 << 20, body_timeout_s=3.0)
    client = _Client([(2.0, b" " * 100)] * 10_000)
    started = trio.current_time()
    await gate(_scope(10 << 20), client.receive, client.send)
    assert client.sent[0]["status"] == 408
    assert trio.current_time() - started <= 3.0 + 100 / MIN_BODY_BYTES_PER_S
    assert gate._buffer._used == 0


async def test_a_body_at_the_minimum_rate_is_read_whole(autojump_clock: trio.testing.MockClock) -> None:
    """A slow but steady body (the minimum rate, in 1 s parts, 20 s in all) is never cut: the app gets all of it."""
    received: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            received.append(len(message["body"]))
            if not message["more_body"]:
                return

    left = 20

    async def receive() -> Message:
        nonlocal left
        await trio.sleep(1.0)
        left -= 1
        return {"type": "http.request", "body": b" " * MIN_BODY_BYTES_PER_S, "more_body": left > 0}

    gate = Gate(app, host="127.0.0.1", token=None, max_body_bytes=10 << 20, body_timeout_s=3.0)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    await gate(_scope(20 * MIN_BODY_BYTES_PER_S), receive, send)
    assert not sent and sum(received) == 20 * MIN_BODY_BYTES_PER_S  # a large body is handed on joined


async def test_chunked_body_is_cut_at_the_limit(autojump_clock: trio.testing.MockClock) -> None:
    """Without a declared length, the part that passes the limit is answered 413; nothing more is read."""
    gate = Gate(_never_called, host="127.0.0.1", token=None, max_body_bytes=1000, body_timeout_s=3.0)
    client = _Client([(0.0, b"x" * 400)] * 5)
    await gate(_scope(None), client.receive, client.send)
    assert client.sent[0]["status"] == 413
    assert len(client.parts) == 2
