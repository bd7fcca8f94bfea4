"""Build the MCP server: one ``MCPServer`` with every tool group registered."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from .._version import __version__
from .._context import Context
from .calls import ToolCalls
from .documents import register_document_tools
from .guide import register_guide
from .sessions import register_session_tools

__all__ = ["build_server", "compact_schemas"]

INSTRUCTIONS = "External memory for long tasks and large documents. Call context_guide first."


def build_server(ctx: Context) -> MCPServer:
    """A server whose tools act on ``ctx``; the transport decides how it is reached."""
    server: MCPServer = MCPServer(name="ctxtrio", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    calls = ToolCalls(audit=ctx.config.audit)
    register_guide(server, ctx, calls)
    register_session_tools(server, ctx, calls)
    register_document_tools(server, ctx, calls)
    compact_schemas(server)
    return server


def compact_schemas(server: MCPServer) -> None:
    """Drop the titles pydantic derives from parameter names, and ``"default": null``.

    An 8k-token model pays for every character of ``tools/list``; these keys tell it
    nothing. Validation is unaffected: the SDK validates arguments with its pydantic
    model, not with the advertised schema. The SDK has no public way to adjust a
    registered tool's schema; without the private attribute the schemas stay longer.
    """
    manager = getattr(server, "_tool_manager", None)
    if manager is None:
        return
    for tool in manager.list_tools():
        schema = {key: value for key, value in tool.parameters.items() if key != "title"}
        schema["properties"] = {
            key: {k: v for k, v in prop.items() if k != "title" and not (k == "default" and v is None)}
            for key, prop in schema.get("properties", {}).items()
        }
        tool.parameters = schema
