"""At the end of the shutdown grace, HTTP connections close once no answer is owed, at most answer_s later."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, cast

import trio
import trio.testing

from ctxtrio.transport.http_server import serve_capped

if TYPE_CHECKING:
    from hypercorn.typing import Framework

Message = MutableMapping[str, Any]

GRACE_S = 1.0
ANSWER_S = 2.0


async def _streaming_app(
    scope: Message, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
) -> None:
    """Lifespan, and every request a stream that never ends (an MCP client's standing GET stream)."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            kind = message["type"].rsplit(".", 1)[-1]
            await send({"type": f"lifespan.{kind}.complete"})
            if kind == "shutdown":
                return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
    await trio.sleep_forever()


async def _stopped_after(owed: Callable[[], Awaitable[None]]) -> float:
    """Serve with one open stream, stop at once; seconds from the stop until serve_capped returns."""
    from hypercorn.config import Config as HypercornConfig

    config = HypercornConfig()
    config.bind = ["127.0.0.1:0"]
    config.graceful_timeout = GRACE_S
    config.accesslog = None
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(
            lambda task_status: serve_capped(
                cast("Framework", _streaming_app),
                config,
                shutdown=shutdown,
                max_connections=8,
                answering=(owed, ANSWER_S),
                task_status=task_status,
            )
        )
        port = int(binds[0].rsplit(":", 1)[1])
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert b"200" in await stream.receive_some(4096)
        stopped = trio.current_time()
        shutdown.set()
    await stream.aclose()
    return trio.current_time() - stopped


async def test_an_open_stream_is_closed_at_the_grace_when_no_answer_is_owed(mock_clock: trio.testing.MockClock) -> None:
    """Nothing owed: a standing stream holds the stop for the grace only, not the grace plus the answer time
    (4b688df lengthened every stop with a connected client from 5.1 to 7.1 s)."""
    mock_clock.autojump_threshold = 0.05

    async def nothing_owed() -> None:
        return

    assert await _stopped_after(nothing_owed) == GRACE_S


async def test_an_owed_answer_holds_the_connections_until_it_is_sent(mock_clock: trio.testing.MockClock) -> None:
    """An answer owed until 0.5 s past the grace keeps the connections that long; one never sent, answer_s."""
    mock_clock.autojump_threshold = 0.05

    async def owed_half_a_second() -> None:  # asked at the grace's end
        await trio.sleep(0.5)

    assert await _stopped_after(owed_half_a_second) == GRACE_S + 0.5
    assert await _stopped_after(trio.sleep_forever) == GRACE_S + ANSWER_S
