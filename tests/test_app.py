"""The nursery tree: startup never waits on the LLM; shutdown is clean."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import trio
from mcp import Client

import ctxtrio
from ctxtrio._app import build_server


async def _hang(stream: trio.SocketStream) -> None:
    await trio.sleep_forever()


async def test_tools_list_not_delayed_by_hanging_llm(tmp_path: Path) -> None:
    """With an endpoint that accepts and never answers, tools/list and context_guide still answer."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, _hang, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        config = ctxtrio.Config(data_dir=tmp_path, llm_base_url=f"http://127.0.0.1:{port}/v1")
        with trio.fail_after(20):  # a deadlock guard, not a benchmark
            async with ctxtrio.open_context(config) as ctx, Client(build_server(ctx)) as client:
                assert ctx.llm is not None
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert "context_guide" in names
                result = await client.call_tool("context_guide", {})
                assert not result.is_error
        nursery.cancel_scope.cancel()


async def test_no_llm_means_no_client(tmp_path: Path) -> None:
    """--no-llm leaves the context without an LLM client; summaries are extractive."""
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        assert ctx.llm is None
        summary = await ctx.summarizer.summarize("One. Two. Three. " * 200, target_tokens=60)
        assert summary.method == "extractive"
