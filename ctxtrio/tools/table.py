"""The tool table: every MCP tool, in the order tools/list shows them.

To add a tool, add a row: write a module-level handler
``async def name(ctx: Context, args: Args, call: Call) -> ToolResult`` and a
:class:`~ctxtrio.tools.spec.Tool` naming it, its parameters, hints and audit ids, then
list it here. :class:`~ctxtrio.tools.runner.ToolRunner` runs every row the same way,
and the SDK boundary (:func:`ctxtrio._sdk.make_server`) advertises and dispatches it.
"""

from __future__ import annotations

from ..store.records import JSON
from .documents import DOC_TABLE
from .guide import GUIDE
from .sessions import SESSION_TABLE
from .spec import Tool, input_schema

__all__ = ["INSTRUCTIONS", "TOOLS", "listing", "tool_named"]

#: What the server tells the host at initialize.
INSTRUCTIONS = "External memory for long tasks and large documents. Call context_guide first."

TOOLS: tuple[Tool, ...] = (GUIDE, *SESSION_TABLE, *DOC_TABLE)

_BY_NAME = {tool.name: tool for tool in TOOLS}


def tool_named(name: str) -> Tool | None:
    """The row called ``name``, or None."""
    return _BY_NAME.get(name)


def listing(tool: Tool) -> dict[str, JSON]:
    """``tool`` as the protocol's ``Tool`` object (what tools/list shows the model)."""
    hints: dict[str, JSON] = {"readOnlyHint": tool.hints.read_only}
    if tool.hints.destructive is not None:
        hints["destructiveHint"] = tool.hints.destructive
    if tool.hints.idempotent is not None:
        hints["idempotentHint"] = tool.hints.idempotent
    hints["openWorldHint"] = False
    listed: dict[str, JSON] = {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": input_schema(tool),
        "annotations": hints,
    }
    if tool.output is not None:
        listed["outputSchema"] = tool.output.schema()
    return listed
