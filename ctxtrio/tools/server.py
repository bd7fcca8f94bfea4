"""Build the MCP server: one ``MCPServer`` with every tool group registered."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from .._version import __version__
from .._context import Context
from .calls import ToolCalls
from .documents import register_document_tools
from .guide import register_guide
from .sessions import register_session_tools

__all__ = ["build_server"]

INSTRUCTIONS = "External memory for long tasks and large documents. Call context_guide first."


def build_server(ctx: Context) -> MCPServer:
    """A server whose tools act on ``ctx``; the transport decides how it is reached."""
    server: MCPServer = MCPServer(name="ctxtrio", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    calls = ToolCalls(audit=ctx.config.audit)
    register_guide(server, ctx, calls)
    register_session_tools(server, ctx, calls)
    register_document_tools(server, ctx, calls)
    return server
