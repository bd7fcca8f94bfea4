"""What a tool call answered, as text: the one reading of a ``CallToolResult`` tests and scripts share."""

from __future__ import annotations

from mcp.types import CallToolResult, TextContent

__all__ = ["text_of"]


def text_of(result: object) -> str:
    """The text blocks of a tool result, joined (a ctxtrio tool answers with one); AssertionError if none."""
    assert isinstance(result, CallToolResult), type(result)
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    assert texts, f"no text in {result!r}"
    return "".join(texts)
