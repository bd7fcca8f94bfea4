"""The tool table: every MCP tool, in the order tools/list shows them.

To add a tool, add a row: write a module-level handler
``async def name(ctx: Wiring, args: Args, call: Call) -> ToolResult`` and a
:class:`~ctxtrio.tools.spec.Tool` naming it, its parameters, hints and audit ids, then
list it here. :class:`~ctxtrio.tools.runner.ToolRunner` runs every row the same way,
and the SDK boundary (:func:`ctxtrio._sdk.make_server`) advertises and dispatches it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .documents import DOC_TABLE
from .guide import GUIDE
from .sessions import SESSION_TABLE
from .spec import Hints, Tool, input_schema

if TYPE_CHECKING:
    from ..store.records import JSON

__all__ = ["INSTRUCTIONS", "TOOLS", "listing", "tool_annotations", "tool_named"]

#: What the server tells the host at initialize.
INSTRUCTIONS = "External memory for long tasks and large documents. Call context_guide first."

TOOLS: tuple[Tool, ...] = (GUIDE, *SESSION_TABLE, *DOC_TABLE)

_BY_NAME = {tool.name: tool for tool in TOOLS}


def tool_named(name: str) -> Tool | None:
    """The row called ``name``, or None."""
    return _BY_NAME.get(name)


def tool_annotations(hints: Hints) -> dict[str, JSON]:
    """The MCP tool annotations for ``hints``, each said only where it differs from the protocol's default.

    The defaults (MCP schema, ``ToolAnnotations``): ``readOnlyHint`` false,
    ``destructiveHint`` true, ``idempotentHint`` false, ``openWorldHint`` true; and
    ``destructiveHint`` and ``idempotentHint`` are "meaningful only when readOnlyHint ==
    false", so a read-only tool states neither. A client that applies the defaults reads
    exactly the hints of the table; nothing is left for it to guess.
    """
    listed: dict[str, JSON] = {}
    if hints.read_only:
        listed["readOnlyHint"] = True
    else:
        if hints.destructive is False:
            listed["destructiveHint"] = False
        if hints.idempotent:
            listed["idempotentHint"] = True
    listed["openWorldHint"] = False
    return listed


def listing(tool: Tool) -> dict[str, JSON]:
    """``tool`` as the protocol's ``Tool`` object (what tools/list shows the model)."""
    listed: dict[str, JSON] = {
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "inputSchema": input_schema(tool),
        "annotations": tool_annotations(tool.hints),
    }
    if tool.output is not None:
        listed["outputSchema"] = tool.output.schema()
    return listed
