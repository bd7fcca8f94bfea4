"""QuickStream: a write the socket takes whole does not yield; everything else behaves as trio's SocketStream."""

from __future__ import annotations

import socket

import pytest
import trio

from ctxtrio.transport.quick_stream import QuickStream
from testkit.turns import turns_of_others_during


def _pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    """A connected pair of stream sockets (Unix domain), with small kernel buffers."""
    left, right = socket.socketpair()
    for sock in (left, right):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    return trio.SocketStream(trio.socket.from_stdlib_socket(left)), trio.SocketStream(
        trio.socket.from_stdlib_socket(right)
    )


async def _turns_during_writes(stream: trio.abc.SendStream, data: bytes, writes: int = 20) -> int:
    """How many times another task runs during ``writes`` writes of ``data`` to ``stream``."""

    async def write() -> None:
        for _ in range(writes):
            await stream.send_all(data)

    return await turns_of_others_during(write)


async def test_a_write_the_socket_takes_whole_does_not_yield_and_arrives() -> None:
    """Small writes return without letting other tasks run (trio's SocketStream lets them run each time), and arrive."""
    left, right = _pair()
    async with left, right:
        assert await _turns_during_writes(left, b"p") >= 19  # what trio's own stream does
        assert await _turns_during_writes(QuickStream(left), b"q") == 0
        assert await _turns_during_writes(QuickStream(left), b"") == 0
        received = b""
        while len(received) < 40:
            received += await right.receive_some(100)
        assert received == b"p" * 20 + b"q" * 20


async def test_a_write_larger_than_the_socket_buffer_arrives_whole_and_in_order() -> None:
    """The rest of a write the socket takes in part goes through trio's waiting send_all."""
    left, right = _pair()
    payload = bytes(range(256)) * 4096  # 1 MiB, far more than the buffers hold
    received = bytearray()

    async def read_all() -> None:
        while len(received) < 2 * len(payload) + 4:
            chunk = await right.receive_some(65536)
            assert chunk, "closed early"
            received.extend(chunk)

    async with left, right, trio.open_nursery() as nursery:
        nursery.start_soon(read_all)
        quick = QuickStream(left)
        await quick.send_all(payload)
        await quick.send_all(b"next")
        await quick.send_all(memoryview(payload))
    assert bytes(received) == payload + b"next" + payload


async def test_writing_to_a_closed_peer_raises_broken_resource() -> None:
    """A peer that went away is trio's BrokenResourceError, as with SocketStream."""
    left, right = _pair()
    await right.aclose()
    quick = QuickStream(left)
    with pytest.raises(trio.BrokenResourceError):
        for _ in range(10):  # the first write may still be taken by the kernel
            await quick.send_all(b"x" * 1000)
    await quick.aclose()


async def test_writing_after_close_raises_closed_resource() -> None:
    """A stream closed on our side refuses writes as trio's does."""
    left, right = _pair()
    quick = QuickStream(left)
    await quick.aclose()
    with pytest.raises(trio.ClosedResourceError):
        await quick.send_all(b"x")
    await right.aclose()


async def test_reads_are_trios() -> None:
    """What the peer sends comes back through receive_some, at most as much as asked."""
    left, right = _pair()
    quick = QuickStream(right)
    async with left, quick:
        await left.send_all(b"z" * 5000)
        received = b""
        while len(received) < 5000:
            chunk = await quick.receive_some(1000)
            assert 0 < len(chunk) <= 1000
            received += chunk
        await left.aclose()
        assert await quick.receive_some(1000) == b""
