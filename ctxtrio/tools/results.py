"""Tool results: compact text for the model, the same facts as structured content."""

from __future__ import annotations

from collections.abc import Mapping

from mcp.types import CallToolResult, TextContent

from ..store.records import JSON

__all__ = ["error_result", "text_result"]


def text_result(text: str, structured: Mapping[str, JSON] | None = None) -> CallToolResult:
    """A successful result: ``text`` for the model, ``structured`` for hosts that use it."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=dict(structured) if structured is not None else None,
    )


def error_result(message: str) -> CallToolResult:
    """A failed call the model can act on: one clear sentence of what to do instead."""
    return CallToolResult(content=[TextContent(type="text", text=f"Error: {message}")], is_error=True)
