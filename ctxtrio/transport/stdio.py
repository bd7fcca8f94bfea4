"""MCP over stdin/stdout, with a stdin reader that can be cancelled.

The SDK's own stdin reader blocks in a worker thread that trio cannot abandon, so a
SIGTERM could never stop a server whose host keeps stdin open. :class:`CancellableLines`
reads each line with ``trio.to_thread.run_sync(..., abandon_on_cancel=True)`` and can
be closed from another task: ``close()`` makes the iteration end as if stdin had hit EOF,
which is how the server "stops accepting" at shutdown.

stdout is left to the SDK, which points fd 1 at stderr while it serves, so stray output
from anything else cannot corrupt the protocol stream.
"""

from __future__ import annotations

import logging
import os
from typing import cast

import anyio
import trio

__all__ = ["CancellableLines", "serve_stdio"]

log = logging.getLogger("ctxtrio.transport")


class CancellableLines:
    """Async iterator over the lines of a file descriptor; ``close()`` ends it at once.

    Reads with ``os.read`` on the raw descriptor, not through a buffered file object: a
    thread abandoned inside ``BufferedReader.readline`` holds the reader's lock, and the
    interpreter aborts at exit when a daemon thread holds it. A thread abandoned in
    ``os.read`` holds nothing; it ends with the process. Whatever it may still read is
    lost, which is what "stop accepting" means.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._eof = False
        self._scope: trio.CancelScope | None = None
        self._closed = False

    def _read_line(self) -> bytes:
        """Blocking: the next line including its newline, or the rest at EOF (b"" when none)."""
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
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                self._eof = True
            self._buffer += chunk

    def close(self) -> None:
        """End the iteration now (idempotent; safe to call from any task)."""
        self._closed = True
        if self._scope is not None:
            self._scope.cancel()

    def __aiter__(self) -> CancellableLines:
        return self

    async def __anext__(self) -> str:
        if self._closed:
            raise StopAsyncIteration
        line = b""
        with trio.CancelScope() as scope:
            self._scope = scope
            line = await trio.to_thread.run_sync(self._read_line, abandon_on_cancel=True)
        self._scope = None
        if scope.cancelled_caught or self._closed or not line:
            self._closed = True
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


async def serve_stdio(server: object, lines: CancellableLines) -> None:
    """Serve one MCP connection over ``lines`` (stdin) and the process's stdout.

    Returns when stdin reaches EOF or ``lines`` is closed and in-flight calls finished.
    ``server`` is an ``mcp.server.mcpserver.MCPServer``; the SDK is imported here so a
    library user who never serves does not pay for it.
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.stdio import stdio_server

    assert isinstance(server, MCPServer)
    lowlevel = server._lowlevel_server  # noqa: SLF001 - the SDK's documented run() path lives here
    # The SDK types stdin as anyio.AsyncFile[str] but only iterates it line by line.
    stdin = cast("anyio.AsyncFile[str]", lines)
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    log.debug("stdio transport finished")
