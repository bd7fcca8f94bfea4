"""The context_* tools (filled in by the session-memory issue)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from .._context import Context
from .calls import ToolCalls

__all__ = ["register_session_tools"]


def register_session_tools(server: MCPServer, ctx: Context, calls: ToolCalls) -> None:
    """Register context_open, _append, _recall, _compact, _status, _update, _list_sessions."""
