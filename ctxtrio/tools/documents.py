"""The doc_* tools (filled in by the documents issue)."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from .._context import Context
from .calls import ToolCalls

__all__ = ["register_document_tools"]


def register_document_tools(server: MCPServer, ctx: Context, calls: ToolCalls) -> None:
    """Register doc_ingest, doc_outline, doc_search, doc_window, doc_summarize, doc_list, doc_forget."""
