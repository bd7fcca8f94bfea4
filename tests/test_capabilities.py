"""Honest capabilities: only tools are advertised; unknown names are protocol errors, never tracebacks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

import ctxtrio
from ctxtrio._app import build_server

ROOT = Path(__file__).resolve().parents[1]
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601


async def test_only_tools_are_advertised(tmp_path: Path) -> None:
    """initialize advertises tools and nothing else: no empty prompts or resources capability."""
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with ctxtrio.open_context(config) as ctx, Client(build_server(ctx)) as client:
        capabilities = client.server_capabilities
    assert capabilities.tools is not None
    assert capabilities.prompts is None and capabilities.resources is None


async def test_unknown_names_get_protocol_errors_without_tracebacks(tmp_path: Path) -> None:
    """Over stdio: an unknown tool is -32602 naming it, prompts and resources -32601; stderr has no traceback."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ctxtrio", "--data-dir", str(tmp_path / "data"), "--no-llm", "--no-audit"],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
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
    assert unknown_prompt.value.code == METHOD_NOT_FOUND
    assert unknown_resource.value.code == METHOD_NOT_FOUND
    log = log_path.read_text()
    assert "Traceback" not in log and "ERROR" not in log, log
