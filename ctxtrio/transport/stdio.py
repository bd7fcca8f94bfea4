"""MCP over stdin/stdout, with a stdin reader that can be cancelled.

The SDK's own stdin reader blocks in a worker thread that trio cannot abandon, so a
SIGTERM could never stop a server whose host keeps stdin open. :class:`CancellableLines`
replaces it. When stdin is a pipe, socket or terminal (what every MCP host gives us) it
reads through ``trio.lowlevel.FdStream``: epoll tells when a line arrives, no thread is
involved, and cancellation is native. For anything epoll cannot watch (a regular file
redirected to stdin) it falls back to reading in a worker thread with
``abandon_on_cancel=True``. Either way ``close()`` ends the iteration as if stdin had
hit EOF, which is how the server "stops accepting" at shutdown.

stdout gets the same treatment: protocol lines go to a private duplicate of fd 1 through
an ``FdStream``, while fd 1 itself points at stderr for as long as we serve, so stray
output from anything else cannot corrupt the protocol stream.

Backpressure: a client that sends requests but does not read the answers would make
the server hold every answer (and the task that made it) in memory: 20,000 unread
answers grew one to 1.1 GB. So the reader stops reading while :data:`MAX_UNANSWERED`
requests are still unanswered (an answer counts once the writer takes it), and reads
on as answers leave; the client's own pipe then fills, and it is the one that waits.

Why not the SDK's ``anyio.wrap_file`` streams: they cost two worker-thread round trips
per message (write, flush) plus one per line read, which on a loaded two-core machine
was most of a 5 ms tool call (see stress/bench_sessions.py).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import trio
import trio.lowlevel

from .._sdk import response_id, serve_lines
from .inflight import InFlight
from .json_lines import JsonLines
from .messages import cancelled_id, canonical_id, peek

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from mcp.server.lowlevel import Server

    from .messages import Peek
    from .warm_start import AnswerRecorder

__all__ = ["CancellableLines", "ProtocolWriter", "StdoutGone", "Traffic", "claim_stdout", "serve_stdio"]

log = logging.getLogger("ctxtrio.transport")

_READ_SIZE = 1 << 16


class StdoutGone(trio.BrokenResourceError):
    """stdout cannot be written any more: the host closed its end (it went away, or stopped reading)."""


#: Requests read but not yet answered before the reader waits (see the module docstring).
MAX_UNANSWERED = 64


def _pollable(fd: int) -> bool:
    """Whether epoll can watch ``fd`` (pipes, sockets and terminals; not regular files)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class CancellableLines:
    """Async iterator over the lines of a file descriptor; ``close()`` ends it at once.

    The descriptor is duplicated, so closing the reader never closes the caller's fd.
    """

    def __init__(
        self,
        fd: int,
        *,
        preload: bytes = b"",
        drain: Callable[[], Awaitable[None]] | None = None,
        room: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._fd = os.dup(fd)
        self._stream: trio.lowlevel.FdStream | None = None
        if _pollable(self._fd):
            self._stream = trio.lowlevel.FdStream(self._fd)  # owns and restores self._fd
        self._buffer = bytearray(preload)  # bytes a warm start already read from the fd
        self._drain = drain  # awaited before EOF is reported: lets in-flight calls finish
        self._room = room  # awaited before each line is read: backpressure
        self._eof = False
        self._closed = False
        self._scope: trio.CancelScope | None = None

    def close(self) -> None:
        """End the iteration now (idempotent; safe to call from any task)."""
        self._closed = True
        if self._scope is not None:
            self._scope.cancel()

    async def aclose(self) -> None:
        """Close and release the descriptor."""
        self.close()
        if self._stream is not None:
            await self._stream.aclose()
        else:
            os.close(self._fd)

    def __aiter__(self) -> CancellableLines:
        return self

    async def __anext__(self) -> str:
        if self._closed:
            raise StopAsyncIteration
        line = b""
        with trio.CancelScope() as scope:
            self._scope = scope
            if self._room is not None:
                await self._room()
            line = await self._next_line()
        self._scope = None
        if scope.cancelled_caught or self._closed or not line:
            self._closed = True
            if self._drain is not None:
                await self._drain()
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")

    async def _next_line(self) -> bytes:
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                return line
            if self._eof:
                line = bytes(self._buffer)
                self._buffer.clear()
                return line
            if self._stream is not None:
                chunk = await self._stream.receive_some(_READ_SIZE)
            else:
                # A thread abandoned inside os.read holds no Python lock, unlike one in
                # BufferedReader.readline, which makes the interpreter abort at exit.
                chunk = await trio.to_thread.run_sync(os.read, self._fd, _READ_SIZE, abandon_on_cancel=True)
            if not chunk:
                self._eof = True
            self._buffer += chunk


class Traffic:
    """Watches protocol lines both ways: in-flight requests, and the warm-start recorder.

    A request is in flight from the line that brings it until the line that answers it,
    or until the client cancels it (``notifications/cancelled``: the SDK never answers a
    cancelled request).
    """

    def __init__(self, recorder: AnswerRecorder | None = None) -> None:
        self.inflight = InFlight()
        self._recorder = recorder

    def incoming(self, line: str, seen: Peek | None = None) -> None:
        """Note a line read; ``seen`` is ``peek(line)`` when the reader has it already."""
        if seen is None:
            seen = peek(line)
        if seen.kind == "request" and seen.id is not None:
            self.inflight.started(canonical_id(seen.id))
            if self._recorder is not None:
                self._recorder.note_request(seen)
        elif seen.kind == "notification" and (cancelled := cancelled_id(seen.message)) is not None:
            self.inflight.finished(canonical_id(cancelled))

    async def outgoing(self, line: str) -> bool:
        """False when the line must not be sent (already answered by the warm start).

        The request stays in flight until this returns (the writer then hands the line on with no checkpoint):
        the stop's drain waits for a warm-start recording saved first. Marked answered before that save, it let
        the drain end at once, and the SDK, cancelling its handlers as the reader ended, caught this one waiting
        for a worker thread: its answer was never written.
        """
        token = response_id(line)
        if token is None:
            seen = peek(line)
            if seen.kind != "response" or seen.id is None:
                return True
            token = seen.id
        keep = True
        recorder = self._recorder
        if recorder is not None and recorder.wants(token):
            keep = recorder.filter(peek(line))
            await trio.to_thread.run_sync(recorder.save)
        self.inflight.finished(canonical_id(token))
        return keep


class ProtocolWriter:
    """Writes protocol lines to a descriptor: non-blocking through epoll when it can.

    The task that writes an answer writes it itself when the pipe takes the whole line at
    once (nearly always); a line the pipe takes only in part is finished by :meth:`run`,
    the writer's own task, and the next line waits until it is out. So a line is never
    split by a cancelled request (no checkpoint between its first byte and handing its
    rest over), at most one line waits for a slow reader (as with the SDK's zero-buffer
    stream before), and a write error ends :meth:`run`, which ends the connection.

    With a recorder (warm start), answers already sent early are dropped, and answers
    worth recording are saved for the next start.
    """

    def __init__(self, fd: int, traffic: Traffic | None = None) -> None:
        self._fd = fd
        self._stream = trio.lowlevel.FdStream(fd) if _pollable(fd) else None  # owns fd; makes it non-blocking
        self._traffic = traffic
        self._held = False  # a line is being written (or its recording saved)
        self._room = trio.Event()  # set when the line being written is out
        self._rest = b""  # what the pipe has not taken yet of that line
        self._more = trio.Event()  # wakes run(): a rest to write, or closing
        self._closing = False

    async def write(self, text: str) -> None:
        while self._held:  # a slow reader: this answer is not out, nor counted as answered
            await self._room.wait()
        self._held, self._room = True, trio.Event()  # lines leave in the order they were taken
        handed = False
        try:
            if self._traffic is not None and not await self._traffic.outgoing(text):
                return
            # From here on no checkpoint: the line goes out whole, or its rest to run().
            data = text.encode("utf-8")
            if self._stream is not None:
                try:
                    data = data[os.write(self._fd, data) :]
                except OSError:  # full (BlockingIOError), or broken: run() meets it again and reports it
                    pass
                if not data:
                    return
            self._rest, handed = data, True
            self._more.set()
        finally:
            if not handed:
                self._release()

    def _release(self) -> None:
        self._held = False
        self._room.set()
        if self._closing:
            self._more.set()  # run() may return now

    async def flush(self) -> None:
        """Nothing is buffered here."""

    async def run(self) -> None:
        """Write what the pipe did not take at once, until :meth:`close` and nothing is left."""
        while True:
            await self._more.wait()
            self._more = trio.Event()
            handed = bool(self._rest)
            while self._rest:
                if self._stream is None:
                    await trio.to_thread.run_sync(_write_all, self._fd, self._rest)
                    self._rest = b""
                    break
                await trio.lowlevel.wait_writable(self._fd)
                try:
                    self._rest = self._rest[os.write(self._fd, self._rest) :]
                except BlockingIOError:
                    continue
                except OSError as exc:
                    if exc.errno == errno.EBADF:
                        raise trio.ClosedResourceError("stdout was closed") from None
                    raise StdoutGone(exc.strerror or str(exc)) from exc
            if handed:
                self._release()
            if self._closing and not self._held:
                return

    def close(self) -> None:
        """Let :meth:`run` return once the line it holds is written."""
        self._closing = True
        self._more.set()

    async def aclose(self) -> None:
        if self._stream is not None:
            await self._stream.aclose()
        else:
            os.close(self._fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@contextmanager
def claim_stdout() -> Iterator[int]:
    """Yield a private duplicate of fd 1 for the protocol; point fd 1 at stderr meanwhile.

    On exit fd 1 is restored. The yielded descriptor belongs to the caller.
    """
    private = os.dup(1)
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield private
    finally:
        os.dup2(saved, 1)
        os.close(saved)


async def serve_stdio(
    server: Server[Any], lines: CancellableLines, out_fd: int, traffic: Traffic | None = None
) -> None:
    """Serve one MCP connection: requests from ``lines``, responses to ``out_fd``.

    Returns when stdin reaches EOF or ``lines`` is closed and in-flight calls finished, or, with a warning,
    when stdout cannot be written (the host closed its end): the calls in flight are cancelled then, as
    nobody would read their answers. ``out_fd`` is closed on return.
    """
    writer = ProtocolWriter(out_fd, traffic)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)
            checked = JsonLines(lines, writer, traffic)
            await serve_lines(server, checked, writer, checked.unread)
            writer.close()
    except* StdoutGone as gone:  # (it ended the server with an exception group's traceback, exit 1)
        inflight = len(traffic.inflight) if traffic is not None else 0
        log.warning(
            "stdout cannot be written (%s): the host closed it; stopping, %d request(s) in flight cancelled",
            gone.exceptions[0],
            inflight,
        )
    finally:
        with trio.CancelScope(shield=True):
            await writer.aclose()
    log.debug("stdio transport finished")
