"""The socket stream hypercorn serves each HTTP connection on, with fewer event-loop turns.

Under a storm of large uploads the event loop runs hundreds of steps between two turns
of any one task, so every schedule point on a small request's path (a ``context_status``)
costs it one whole round of everybody else's steps. trio's ``SocketStream`` has a schedule
point after every ``send_all``, also when the kernel took the bytes at once and also for
an empty write, and hypercorn writes each response in three: the head, the body, and the
end of the message (empty for a body of declared length).

:class:`QuickStream` changes one thing: ``send_all`` writes with one non-blocking
``os.write`` when the socket takes the bytes whole, and then returns without yielding
(cancellation is still checked before the write); a write the socket takes only in part,
or not at all, goes on through trio's own ``send_all``, which waits for the socket as
before. An empty write returns at once. Everything else (reads, the socket options,
closing, errors for a closed or broken socket) is trio's, but for one check: two
``send_all`` at once are not refused (trio's raise ``BusyResourceError``), and a quick
write could slip between the pieces of a waiting one. hypercorn never does that: its
trio ``TCPServer`` sends every event under its ``send_lock`` (``hypercorn/trio/tcp_server.py``).

Reads stay hypercorn's 64 KiB: larger ones cut the loop steps of an upload too, but a
connection the gate leaves unread holds up to hypercorn's ten queued reads, so they would
raise what each stalled client can make the server hold (and hypercorn's queue cannot be
made shorter: at three, concurrent ``/health`` requests lost connections in
``stress/attack.py http``).
"""

from __future__ import annotations

import errno
import os

import trio

__all__ = ["QuickStream"]

#: write(2) errors that mean the peer is gone (trio's SocketStream raises BrokenResourceError for them).
_BROKEN = {errno.EPIPE, errno.ECONNRESET, errno.ENOTCONN, errno.ECONNABORTED}


class QuickStream(trio.abc.HalfCloseableStream):
    """A ``trio.SocketStream`` whose writes that complete at once do not yield (see the module docstring).

    trio's stream classes cannot be subclassed, so this one holds one and passes the rest on.
    """

    def __init__(self, stream: trio.SocketStream) -> None:
        self._stream = stream
        self.socket = stream.socket

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self.socket.did_shutdown_SHUT_WR or self.socket.fileno() == -1:
            await self._stream.send_all(data)  # trio's error for a closed stream
            return
        await trio.lowlevel.checkpoint_if_cancelled()
        if not data:
            return
        try:
            sent = os.write(self.socket.fileno(), data)
        except BlockingIOError:
            sent = 0
        except OSError as exc:
            if exc.errno in _BROKEN:
                raise trio.BrokenResourceError(f"socket connection broken: {exc}") from exc
            raise
        if sent < len(data):
            with memoryview(data) as view:
                await self._stream.send_all(view[sent:])

    async def wait_send_all_might_not_block(self) -> None:
        await self._stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self._stream.receive_some(max_bytes)

    async def send_eof(self) -> None:
        await self._stream.send_eof()

    async def aclose(self) -> None:
        await self._stream.aclose()
