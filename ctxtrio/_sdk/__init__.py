"""The boundary with the MCP SDK: the only module that builds its server, drives its
transports, or knows how it writes the wire format.

Everything else speaks in plain values: the tool layer hands over each tool's listing
(the protocol's ``Tool`` object as JSON) and a ``call(name, arguments, progress)``
function returning a result with ``text``, ``structured`` and ``is_error``; the
transports hand over a line source and a line writer. The touch points, each pinned by
a contract test in ``tests/test_sdk.py`` (the SDK is pinned in pyproject.toml to the
minor versions those tests pass on):

* :func:`make_server` builds the SDK's low-level ``Server`` with ``tools/list`` and
  ``tools/call`` handlers (public constructor arguments). Arguments reach ``call``
  exactly as the client sent them: the high-level ``MCPServer`` would parse string
  arguments that look like JSON into objects (its ``pre_parse_json``), so a JSON
  document could not be ingested inline, nor the text ``"null"``.
* :func:`serve_lines` runs one connection with ``Server.run`` over the read and write
  streams of :mod:`.lines` (the shapes of the SDK's stream protocols), which parse and
  write lines as the SDK's ``stdio_server`` does, without its two tasks in between.
* :func:`http_app` is the SDK's Streamable HTTP ASGI app; its POST handler's module gets
  a ``json`` whose ``loads`` takes a body already parsed in a thread (:mod:`.bodies`).
* :func:`response_id` reads the id of a response from the head of the line the SDK
  wrote, relying on how it serializes responses (``jsonrpc`` first, then ``id``).

The SDK is imported inside the functions (types under ``TYPE_CHECKING``): importing it
costs about a second, and the warm start and library users who never serve must not
pay for it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .._progress import Progress
from .lines import LineMessages, LineWriter, MessageLines

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.server.models import InitializationOptions
    from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams
    from starlette.applications import Starlette

__all__ = [
    "LineWriter",
    "Outcome",
    "ToolCall",
    "http_app",
    "import_sdk",
    "make_server",
    "response_id",
    "serve_lines",
]

log = logging.getLogger("ctxtrio.transport")

#: How the SDK serializes every response it writes (pydantic keeps field order).
_SDK_RESPONSE = re.compile(r'\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"(?:result|error)"')


class Outcome(Protocol):
    """A tool call's result as the boundary reads it."""

    @property
    def text(self) -> str: ...
    @property
    def structured(self) -> Mapping[str, Any] | None: ...
    @property
    def is_error(self) -> bool: ...


#: Called with the current request's :data:`~ctxtrio._progress.Progress` (a no-op without a progress token).
ToolCall = Callable[[str, Mapping[str, Any] | None, Progress], Awaitable[Outcome]]


def import_sdk() -> None:
    """Import the SDK modules a server uses (about a second), e.g. before ``gc.freeze()``."""
    import mcp.server.lowlevel
    import mcp.server.stdio
    import mcp.types  # noqa: F401


def make_server(
    *, name: str, version: str, instructions: str, tools: Sequence[Mapping[str, Any]], call: ToolCall
) -> Server[Any]:
    """The SDK's server answering ``tools/list`` with ``tools`` and ``tools/call`` with ``call``.

    Each of ``tools`` is a ``Tool`` object of the protocol as JSON (``name``, ``title``,
    ``description``, ``inputSchema``, ``annotations``, optionally ``outputSchema``); it is
    validated here, once, against the SDK's model.
    """
    from mcp import types
    from mcp.shared.exceptions import MCPError

    listed = types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in tools])
    schemas = {tool.name: tool.input_schema for tool in listed.tools}

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return listed

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        if params.name not in schemas:
            # A protocol error, not a tool result (MCP tools spec: unknown tool -> -32602);
            # the SDK sends an MCPError as the JSON-RPC error, with no traceback.
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name!r}; tools/list names the tools")

        async def progress(done: float, total: float) -> None:
            await ctx.session.report_progress(done, total)

        outcome = await call(params.name, params.arguments, progress)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.text)],
            structured_content=dict(outcome.structured) if outcome.structured is not None else None,
            is_error=outcome.is_error,
        )

    server = _server_class()(
        name,
        version=version,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )
    if not _tracing():
        server.middleware = [layer for layer in server.middleware if type(layer).__name__ != _OTEL_MIDDLEWARE]
    return server


#: The SDK's default middleware: one OpenTelemetry span per inbound message.
_OTEL_MIDDLEWARE = "OpenTelemetryMiddleware"


def _tracing() -> bool:
    """Whether an OpenTelemetry tracer provider is installed (in code or ``OTEL_PYTHON_TRACER_PROVIDER``).

    The SDK's ``Server.__init__`` puts ``OpenTelemetryMiddleware`` in ``Server.middleware``
    and says it "is a no-op until an OTel exporter is installed. Drop it from this list to
    opt out." (``mcp/server/lowlevel/server.py``, 2.3). Without a provider its spans are the
    API's non-recording ones, yet building them (attributes, context, ``use_span``) was
    about a tenth of the SDK's CPU a call; so it is dropped then. A provider installed only
    after the server is built gets no spans from it.
    """
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def _server_class() -> type[Server[Any]]:
    """The SDK's ``Server``, advertising ``resources.listChanged`` once resources are served.

    Both transports ask the server for its initialization options without arguments
    (the Streamable HTTP session manager cannot be told otherwise), so the default
    is set here; ``ctxtrio._sdk.surface`` announces list changes to handshake clients.
    """
    from mcp.server.lowlevel import NotificationOptions, Server

    class CtxServer(Server[Any]):
        def create_initialization_options(
            self,
            notification_options: NotificationOptions | None = None,
            experimental_capabilities: dict[str, dict[str, Any]] | None = None,
            extensions: dict[str, dict[str, Any]] | None = None,
        ) -> InitializationOptions:
            if notification_options is None:
                serves = self.get_request_handler("resources/list") is not None
                notification_options = NotificationOptions(resources_changed=serves)
            return super().create_initialization_options(notification_options, experimental_capabilities, extensions)

    return CtxServer


async def serve_lines(
    server: Server[Any],
    lines: AsyncIterable[str],
    writer: LineWriter,
    unread: Callable[[str, ValueError], Awaitable[None]] | None = None,
) -> None:
    """Serve one MCP connection: requests from ``lines``, responses through ``writer``; a line the SDK's
    reader refuses goes to ``unread`` to answer (without it, the SDK drops it: see :class:`.lines.LineMessages`).

    Returns when ``lines`` ends (after the SDK finished what it was serving).
    """
    await server.run(LineMessages(lines, unread), MessageLines(writer), server.create_initialization_options())


def http_app(
    server: Server[Any], *, host: str, max_body_bytes: int, max_sessions: int = 1000, session_idle_s: float = 1800.0
) -> Starlette:
    """The SDK's Streamable HTTP app for ``server`` at ``/mcp``.

    Its own DNS-rebinding check is off: the transport's gate checks Host and Origin for
    every path, and the SDK's would reject the names an ``--allow-remote`` bind serves.
    Sessions close after ``session_idle_s`` without a request; at ``max_sessions`` a new
    one closes the session idle longest (:mod:`.sessions`).
    """
    from mcp.server.transport_security import TransportSecuritySettings

    from . import bodies
    from .sessions import evict_idle_at_cap

    bodies.install()

    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=security,
        host=host,
        max_request_body_size=max_body_bytes,
        session_idle_timeout=session_idle_s,
        max_sessions=max_sessions,
    )
    evict_idle_at_cap(server.session_manager, max_sessions, session_idle_s)
    return app


def response_id(line: str) -> str | None:
    """The id (as JSON text) of a response as the SDK writes it, read from its first bytes; else None.

    Outgoing results can be large (a recall or a search packs kilobytes), and only the
    id is needed to track what is in flight.
    """
    match = _SDK_RESPONSE.match(line)
    return json.dumps(json.loads(match.group(1))) if match else None
