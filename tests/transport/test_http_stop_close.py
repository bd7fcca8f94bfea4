"""Stopping: a kept-alive connection whose answer ends after the stop began is closed with it, at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, cast

import trio
import trio.testing

from ctxtrio.transport.http_server import serve_capped

if TYPE_CHECKING:
    from hypercorn.typing import Framework

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

GRACE_S = 10.0
REQUEST = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
BODY = b'{"jsonrpc": "2.0", "id": 1, "result": {}}'


def answering_as_the_sdk(answer: trio.Event) -> Callable[[Message, Receive, Send], Awaitable[None]]:
    """An ASGI app that answers as the MCP SDK's ``handle_modern_request`` (mcp 2.3,
    ``mcp/server/_streamable_http_modern.py``) does: inside a task group whose ``watch_disconnect``
    task cancels the group when ``receive`` gives ``http.disconnect``; the answer, once ``answer`` is
    set, is one JSON body (``_write``), and the group is cancelled after it."""

    async def app(scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                kind = (await receive())["type"].rsplit(".", 1)[-1]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        async with trio.open_nursery() as group:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(watch_disconnect)
            await answer.wait()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": BODY, "more_body": False})
            group.cancel_scope.cancel()

    return app


async def _read_answer(stream: trio.SocketStream) -> bytes:
    """The bytes of one answer (its head and BODY)."""
    data = b""
    while not data.endswith(BODY):
        chunk = await stream.receive_some(4096)
        assert chunk, data
        data += chunk
    return data


async def test_the_connection_closes_when_its_answer_ends_after_the_stop(mock_clock: trio.testing.MockClock) -> None:
    """A call answered during the grace: its connection is closed once the answer is sent, so the client's next
    request on it fails at once, not unanswered at the grace's end (before, hypercorn's close was cancelled
    by the SDK's watch_disconnect and the connection stayed open, reading on, until the grace ran out)."""
    from hypercorn.config import Config as HypercornConfig

    mock_clock.autojump_threshold = 0.05
    config = HypercornConfig()
    config.bind = ["127.0.0.1:0"]
    config.graceful_timeout = GRACE_S
    config.accesslog = None
    shutdown, answer = trio.Event(), trio.Event()
    app = cast("Framework", answering_as_the_sdk(answer))
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(
            lambda task_status: serve_capped(app, config, shutdown=shutdown, max_connections=8, task_status=task_status)
        )
        stream = await trio.open_tcp_stream("127.0.0.1", int(binds[0].rsplit(":", 1)[1]))
        await stream.send_all(REQUEST)
        await trio.sleep(1)  # the request is with the app, which waits to answer
        shutdown.set()
        stopped = trio.current_time()
        await trio.sleep(1)  # the listener is closed: the server is stopping
        answer.set()
        assert (await _read_answer(stream)).startswith(b"HTTP/1.1 200")
        ended: bytes | None = None
        try:
            await stream.send_all(REQUEST)  # a keep-alive client's next call
            ended = await stream.receive_some(4096)
        except trio.BrokenResourceError:  # reset: the server had closed it
            pass
        closed_after = trio.current_time() - stopped
    await stream.aclose()
    assert ended in (None, b"")
    assert closed_after == 1.0, "the next request waited for the end of the grace"
