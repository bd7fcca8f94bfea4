"""Honest capabilities: what is advertised is served; unknown names are protocol errors, never tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

import ctxtrio
from ctxtrio._app import build_server
from ctxtrio._wiring import open_wiring
from testkit.servers import server_params

ROOT = Path(__file__).resolve().parents[1]
INVALID_PARAMS = -32602


async def test_capabilities_are_what_is_served(tmp_path: Path) -> None:
    """Handshake and 2026-07-28 clients see tools, resources (subscribe, list changes), prompts, completions;
    logging only where logging/setLevel exists (the handshake revisions)."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx:
        server = build_server(ctx)
        async with Client(server, mode="legacy") as legacy:
            handshake = legacy.server_capabilities
        async with Client(server) as modern:
            assert modern.protocol_version == "2026-07-28"
            discovered = modern.server_capabilities
    for capabilities in (handshake, discovered):
        assert capabilities.tools is not None and not capabilities.tools.list_changed
        assert capabilities.prompts is not None and not capabilities.prompts.list_changed
        assert capabilities.resources is not None
        assert capabilities.resources.subscribe and capabilities.resources.list_changed
        assert capabilities.completions is not None
    assert handshake.logging is not None and discovered.logging is None


async def test_unknown_names_get_protocol_errors_without_tracebacks(tmp_path: Path) -> None:
    """Over stdio: an unknown tool, prompt or resource is -32602 naming it; stderr has no traceback."""
    params = server_params(tmp_path / "data", cache=tmp_path / "cache")
    log_path = tmp_path / "stderr.log"
    with open(log_path, "w") as errlog, trio.fail_after(60):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            with pytest.raises(MCPError) as unknown_tool:
                await client.call_tool("doc_serch", {"query": "x"})
            with pytest.raises(MCPError) as unknown_prompt:
                await client.get_prompt("nope")
            with pytest.raises(MCPError) as unknown_resource:
                await client.read_resource("ctxtrio://doc/nope")
            assert not (await client.call_tool("context_guide", {})).is_error  # still serving
    assert unknown_tool.value.code == INVALID_PARAMS
    assert "Unknown tool: 'doc_serch'" in unknown_tool.value.message
    assert unknown_prompt.value.code == INVALID_PARAMS and "'nope'" in unknown_prompt.value.message
    assert unknown_resource.value.code == INVALID_PARAMS
    assert unknown_resource.value.error.data == {"uri": "ctxtrio://doc/nope"}
    log = log_path.read_text()
    assert "Traceback" not in log and "ERROR" not in log, log


async def test_2026_results_carry_caching_hints(tmp_path: Path) -> None:
    """2026-07-28 lists that never change may be reused for 5 minutes; what reads the store is stale at once."""
    from ctxtrio._sdk.surface import LIST_TTL_MS

    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx, Client(build_server(ctx), cache=None) as client:
        tools = await client.list_tools()
        prompts = await client.list_prompts()
        templates = await client.list_resource_templates()
        resources = await client.list_resources()
        guide = await client.read_resource("ctxtrio://guide")
    assert [r.ttl_ms for r in (tools, prompts, templates)] == [LIST_TTL_MS] * 3
    assert [r.ttl_ms for r in (resources, guide)] == [0, 0]
    assert {r.cache_scope for r in (tools, prompts, templates, resources, guide)} == {"private"}
