"""The nursery tree: startup never waits on the LLM; shutdown is clean."""

from __future__ import annotations

import fcntl
from functools import partial
from typing import TYPE_CHECKING

import trio
from mcp import Client

import ctxtrio
from ctxtrio import _wiring
from ctxtrio._app import build_server
from ctxtrio._wiring import open_wiring

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


async def _hang(stream: trio.SocketStream) -> None:
    await trio.sleep_forever()


async def test_tools_list_not_delayed_by_hanging_llm(tmp_path: Path) -> None:
    """With an endpoint that accepts and never answers, tools/list and context_guide still answer."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, _hang, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        config = ctxtrio.Config(data_dir=tmp_path, llm_base_url=f"http://127.0.0.1:{port}/v1")
        with trio.fail_after(20):  # a deadlock guard, not a benchmark
            async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
                assert ctx.llm is not None
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert "context_guide" in names
                result = await client.call_tool("context_guide", {})
                assert not result.is_error
        nursery.cancel_scope.cancel()


async def test_no_llm_means_no_client(tmp_path: Path) -> None:
    """--no-llm leaves the context without an LLM client; summaries are extractive."""
    async with open_wiring(ctxtrio.Config(data_dir=tmp_path, llm_enabled=False)) as ctx:
        assert ctx.llm is None
        summary = await ctx.summarizer.summarize("One. Two. Three. " * 200, target_tokens=60)
        assert summary.method == "extractive"


async def test_drain_deadline_bounds_a_shutdown_behind_a_locked_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An append stuck on a journal another process holds delays shutdown by DRAIN_DEADLINE_S, not the lock timeout."""
    monkeypatch.setattr(_wiring, "DRAIN_DEADLINE_S", 0.5)
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, lock_timeout_s=60)
    async with ctxtrio.open_context(config) as ctx:
        await ctx.sessions.open("s1")
        journal = ctx.data.session_journal("s1")

    async def append() -> None:
        await ctx.sessions.append("s1", "waits for the lock")

    with open(journal, "rb") as other_process:
        fcntl.flock(other_process.fileno(), fcntl.LOCK_EX)
        with trio.fail_after(20):  # a deadlock guard: the lock timeout alone would be 60 s
            async with ctxtrio.open_context(config) as ctx:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(append)
                    await trio.sleep(0.3)
                    nursery.cancel_scope.cancel()  # the caller gives up; its append stays queued
        assert journal.read_bytes().count(b"waits for the lock") == 0
