"""The whole tool surface: 15 tools, each titled and annotated, small enough for an 8k window."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import Client

import ctxtrio
from ctxtrio._app import build_server
from ctxtrio.tools.documents import DOC_TOOLS
from ctxtrio.tools.sessions import SESSION_TOOLS

#: The original's tools/list was 10,430 characters; what a host shows the model of ours
#: (name, title, description, input schema, annotations) must stay under this.
MAX_TOOLS_LIST_CHARS = 7000
#: The whole tools/list, outputSchemas included. Hosts keep outputSchema out of the model's
#: tool catalogue (Claude Code sends the model only name, description and input schema:
#: anthropics/claude-code#54197) and use it to validate structuredContent.
MAX_FULL_TOOLS_LIST_CHARS = 10_430


async def test_fifteen_tools_under_the_size_budget(tmp_path: Path) -> None:
    """tools/list names all 15 tools; a model is shown under 7,000 characters of it, output schemas included under 10,430."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)
    async with ctxtrio.open_context(config) as ctx, Client(build_server(ctx)) as client:
        tools = (await client.list_tools()).tools
    names = sorted(tool.name for tool in tools)
    assert names == sorted([*SESSION_TOOLS, *DOC_TOOLS, "context_guide"])
    shown = [tool.model_dump(by_alias=True, exclude_none=True, mode="json", exclude={"output_schema"}) for tool in tools]
    size = len(json.dumps(shown, separators=(",", ":")))
    assert size < MAX_TOOLS_LIST_CHARS, size
    full = [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in tools]
    assert all("outputSchema" in tool for tool in full)
    full_size = len(json.dumps(full, separators=(",", ":")))
    assert full_size < MAX_FULL_TOOLS_LIST_CHARS, full_size


async def test_every_tool_has_title_and_hints(tmp_path: Path) -> None:
    """Each tool declares a title and read-only/destructive/idempotent/open-world hints."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)
    async with ctxtrio.open_context(config) as ctx, Client(build_server(ctx)) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        assert tool.title, tool.name
        hints = tool.annotations
        assert hints is not None and hints.open_world_hint is False, tool.name
        assert hints.read_only_hint is not None, tool.name
        if not hints.read_only_hint:
            assert hints.destructive_hint is not None and hints.idempotent_hint is not None, tool.name
        assert "title" not in tool.input_schema, tool.name
        for prop in tool.input_schema.get("properties", {}).values():
            assert "title" not in prop and prop.get("default", 0) is not None, tool.name
