"""The SDK's message streams over a line source and a line writer, without tasks in between.

``Server.run(read_stream, write_stream, ...)`` takes any objects with the shape of the
SDK's ``ReadStream``/``WriteStream`` protocols (``mcp.shared._stream_protocols``:
``receive``, async iteration, ``aclose``, async context for reading; ``send``,
``aclose``, async context for writing). The SDK's ``stdio_server`` puts two tasks and two
zero-buffer memory streams between the line source and the server (a reader that parses
each line, a writer that serializes each message), so every message costs a task switch
each way. Here the server's own loop parses the next line when it asks for it, and the
task that answers a request serializes and writes its answer. What the SDK's reader and
writer do to each message is kept: a line becomes the message
``jsonrpc_message_adapter.validate_json(line, by_name=False)`` would give, and a line that
does not parse is handed on as the exception that call raises (the server drops it, logged
at debug level only: a request the client then waits for forever), or, given ``unread``, handed
to it to answer, and the next line read; a message is written as ``model_dump_json(by_alias=True, exclude_unset=True)`` plus
a line feed, then ``flush()``.

The line is parsed once by ``pydantic_core.from_json`` and the object validated with
``validate_python``: 1.2 against ``validate_json``'s 2.6-2.8 ms of CPU for a 1 MB
``doc_ingest`` line of stdlib source (``validate_json`` of the message union costs more
than parsing the text once). The JSON-RPC message types hold only ``Literal["2.0"]``, ``str``, strict
``int``, ``dict[str, Any]`` and ``Any``, which validate JSON text and the parsed object
alike. A line either step rejects (or that holds ``NaN``/``Infinity``, which
``from_json`` is told to refuse) is given to ``validate_json`` after all, so an error
reaching the SDK is the one it raised before, with its message.

A line is written whole or not at all as far as the server's tasks can tell: the writer
(``ctxtrio.transport.stdio.ProtocolWriter``) takes a line without a checkpoint once it
starts writing it, so a cancelled request cannot leave half an answer on the wire.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
    from types import TracebackType

    from mcp.shared.message import SessionMessage

__all__ = ["LineMessages", "LineWriter", "MessageLines"]


class LineWriter(Protocol):
    """Where protocol lines go: the SDK awaits ``write(line)`` then ``flush()``."""

    async def write(self, text: str) -> None: ...
    async def flush(self) -> None: ...


class LineMessages:
    """The SDK's read stream: each line of ``lines`` parsed into a message (or the parse error, unless
    ``unread`` answers it)."""

    def __init__(
        self, lines: AsyncIterable[str], unread: Callable[[str, ValueError], Awaitable[None]] | None = None
    ) -> None:
        import anyio
        from mcp import types
        from mcp.shared.message import SessionMessage

        self._lines: AsyncIterator[str] = aiter(lines)
        from pydantic_core import from_json

        self._adapter = types.jsonrpc_message_adapter
        self._from_json = from_json
        self._message = SessionMessage
        # The stream protocol's ends, looked up once rather than imported on every message.
        self._ended = anyio.EndOfStream
        self._shut = anyio.ClosedResourceError
        self._closed = False
        self._unread = unread

    async def receive(self) -> SessionMessage | Exception:
        while True:
            if self._closed:
                raise self._shut
            try:
                line = await anext(self._lines)
            except StopAsyncIteration:
                raise self._ended from None
            try:
                message = self._adapter.validate_python(self._from_json(line, allow_inf_nan=False), by_name=False)
            except ValueError:  # not JSON, or no message: the SDK's own parse says which, as before
                try:
                    message = self._adapter.validate_json(line, by_name=False)
                except ValueError as exc:
                    if self._unread is None:
                        return exc  # pydantic.ValidationError; as the SDK's stdin reader: the server drops it
                    await self._unread(line, exc)
                    continue
            return self._message(message)

    def __aiter__(self) -> LineMessages:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except self._ended:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> LineMessages:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class MessageLines:
    """The SDK's write stream: each message serialized as the SDK's stdio writer does, one line each."""

    def __init__(self, writer: LineWriter) -> None:
        self._writer = writer
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            import anyio

            raise anyio.ClosedResourceError
        text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        await self._writer.write(text + "\n")
        await self._writer.flush()

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> MessageLines:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> Any:
        await self.aclose()
        return None
