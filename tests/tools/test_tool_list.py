"""The whole tool surface: 15 tools, each titled and annotated, small enough for an 8k window."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp import Client

import ctxtrio
from ctxtrio._app import build_server
from ctxtrio._wiring import open_wiring
from ctxtrio.tools.documents import DOC_TOOLS
from ctxtrio.tools.sessions import SESSION_TOOLS
from ctxtrio.tools.table import tool_named
from testkit.tool_list import listed_chars

if TYPE_CHECKING:
    from pathlib import Path

#: The original's tools/list was 10,430 characters; what a host shows the model of ours
#: (name, title, description, input schema, annotations) must stay under this.
MAX_TOOLS_LIST_CHARS = 7000
#: The whole tools/list result, outputSchemas included (9,798 now). Hosts keep outputSchema
#: out of the model's tool catalogue (Claude Code sends the model only name, description
#: and input schema: anthropics/claude-code#54197) and use it to validate
#: structuredContent. stress/tool_list_size.py prints what further cuts would cost.
MAX_FULL_TOOLS_LIST_CHARS = 9800


async def test_fifteen_tools_under_the_size_budget(tmp_path: Path) -> None:
    """tools/list names all 15 tools; a model is shown under 7,000 characters of it, output schemas included under 9,800."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        tools = (await client.list_tools()).tools
    names = sorted(tool.name for tool in tools)
    assert names == sorted([*SESSION_TOOLS, *DOC_TOOLS, "context_guide"])
    shown = [
        tool.model_dump(by_alias=True, exclude_none=True, mode="json", exclude={"output_schema"}) for tool in tools
    ]
    size = listed_chars(shown)
    assert size < MAX_TOOLS_LIST_CHARS, size
    full = [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools]
    assert all("outputSchema" in tool for tool in full)
    full_size = listed_chars(full)
    assert full_size < MAX_FULL_TOOLS_LIST_CHARS, full_size


async def test_annotations_read_with_the_protocol_defaults_give_the_table_hints(tmp_path: Path) -> None:
    """Hints are listed only where they differ from MCP's defaults, and a client applying those defaults reads the table's."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        row = tool_named(tool.name)
        assert row is not None and tool.annotations is not None
        hints = tool.annotations
        # MCP ToolAnnotations: readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true.
        assert (hints.read_only_hint or False) is row.hints.read_only, tool.name
        assert hints.open_world_hint is False, tool.name
        if row.hints.read_only:  # destructive/idempotent are meaningful only for a tool that writes
            assert hints.destructive_hint is None and hints.idempotent_hint is None, tool.name
        else:
            assert (True if hints.destructive_hint is None else hints.destructive_hint) is bool(row.hints.destructive)
            assert (hints.idempotent_hint or False) is bool(row.hints.idempotent), tool.name
        dumped = hints.model_dump(by_alias=True, exclude_none=True)
        assert True not in {dumped.get("destructiveHint")} and False not in {
            dumped.get("readOnlyHint"),
            dumped.get("idempotentHint"),
        }, (tool.name, dumped)


async def test_every_tool_has_title_and_hints(tmp_path: Path) -> None:
    """Each tool declares a title and a closed world; no schema property carries a title or a null default."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        assert tool.title, tool.name
        hints = tool.annotations
        assert hints is not None and hints.open_world_hint is False, tool.name
        assert "title" not in tool.input_schema, tool.name
        for prop in tool.input_schema.get("properties", {}).values():
            assert "title" not in prop and prop.get("default", 0) is not None, tool.name
