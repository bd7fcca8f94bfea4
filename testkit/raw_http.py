"""Raw-socket HTTP/1.1 for attacking the server's Gate: request heads, status lines, an endless chunked body.

What a misbehaving client sends, byte for byte, where an HTTP library would refuse or
fix it up (RFC 9112: a message body is framed by ``Content-Length`` or by
``Transfer-Encoding: chunked``, each chunk its size in hex, CRLF, the data, CRLF).
Used by tests/transport/test_http_limits.py and stress/attacks/http.py.
"""

from __future__ import annotations

import trio

__all__ = ["address", "post_head", "send_chunked_until_answered", "stall_connections", "status_line"]

_CHUNK = b"x" * 65536
_FRAMED = f"{len(_CHUNK):x}\r\n".encode() + _CHUNK + b"\r\n"


def address(base_url: str) -> tuple[str, int]:
    """``http://host:port`` as (host, port)."""
    host, port = base_url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def post_head(host: str, port: int, *, length: int | None, extra: str = "") -> bytes:
    """The head of a ``POST /mcp``: ``Content-Length: length``, or chunked when ``length`` is None."""
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\n{extra}{framing}\r\n\r\n"
    ).encode()


async def status_line(stream: trio.SocketStream) -> bytes:
    """The first line the server answers on ``stream`` (b"" if it closes first)."""
    head = bytearray()
    while b"\r\n" not in head:
        part = await stream.receive_some()
        if not part:
            break
        head.extend(part)
    return bytes(head.split(b"\r\n", 1)[0])


async def send_chunked_until_answered(
    stream: trio.SocketStream, host: str, port: int, *, cap_bytes: int
) -> tuple[bytes, int]:
    """POST a chunked body of 64 KiB chunks that stops only when the server answers (or at ``cap_bytes``).

    Returns the status line and the bytes of body sent. A server that reads the whole
    body before answering gets all ``cap_bytes``; one that cuts it at a limit answers
    after little more than the limit plus what the socket buffers hold.
    """
    answered = trio.Event()
    sent = 0
    status = b""

    async def feed() -> None:
        nonlocal sent
        await stream.send_all(post_head(host, port, length=None))
        while not answered.is_set() and sent < cap_bytes:
            try:
                await stream.send_all(_FRAMED)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            sent += len(_CHUNK)

    async def read() -> None:
        nonlocal status
        status = await status_line(stream)
        answered.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed)
        nursery.start_soon(read)
    return status, sent


async def stall_connections(host: str, port: int, count: int, *, within_s: float) -> list[trio.SocketStream]:
    """Open ``count`` connections at once, each sending a POST head and the start of its body, then nothing.

    Connects still waiting after ``within_s`` (past the server's cap its kernel accept
    queue fills, and a dropped SYN is retried with backoff) are given up. Returns the
    streams that got through; the caller closes them.
    """
    streams: list[trio.SocketStream] = []

    async def stall() -> None:
        with trio.move_on_after(within_s):
            stream = await trio.open_tcp_stream(host, port)
            streams.append(stream)
            await stream.send_all(post_head(host, port, length=1000) + b'{"jsonrpc"')

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(stall)
    return streams
