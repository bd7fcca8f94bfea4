"""Summarizing tools degrade to extractive, and say why, when the LLM endpoint is down or hung.

End to end through the SDK's in-memory client, against a closed loopback port or the
fake OpenAI-compatible server of ``tests/llm/fake_openai.py``. Real clock: the fake and
httpx talk over real sockets. ``trio.fail_after`` guards against waiting on a dead
endpoint; it is well below the LLM deadline wherever "fast" is what is pinned down.
"""

from __future__ import annotations

import re
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import pytest
import trio
from mcp import Client

from ctxtrio._app import build_server
from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from testkit.fake_openai import FakeServer, closed_port_url, open_fake_openai
from testkit.results import text_of

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from mcp.types import CallToolResult

    from ctxtrio._wiring import Wiring

WORDS = "cache cursor deadline journal ledger offset outline page query recall session slice token window".split()
#: Why a result degraded: the endpoint failed, its breaker is open, or the deadline passed.
DEGRADED = re.compile(r"Note: (LLM unavailable|LLM timed out|deadline passed)[^\n]*; extractive")


def document(sections: int = 12) -> str:
    """Markdown of ``sections`` sections of about 150 tokens: several 200-token chunks."""
    parts = ["# Degrade manual\n\n"]
    for number in range(sections):
        words = " ".join(WORDS[(number + k) % len(WORDS)] for k in range(90))
        parts.append(f"## Section {number}\n\nSection {number} says: {words}.\n\n")
    return "".join(parts)


@asynccontextmanager
async def client_for(
    tmp_path: Path, base_url: str, *, deadline_s: float = 30.0, llm: bool = True
) -> AsyncIterator[tuple[Wiring, Client]]:
    config = Config(
        data_dir=tmp_path / "data",
        llm_enabled=llm,
        llm_base_url=base_url,
        llm_deadline_s=deadline_s,
        audit=False,
        chunk_tokens=200,
        chunk_overlap_tokens=20,
    )
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        yield ctx, client


async def ingest(client: Client) -> int:
    """Ingest :func:`document` as ``d``; return its chunk count (several)."""
    result = await client.call_tool("doc_ingest", {"text": document(), "doc_id": "d"})
    assert not result.is_error and result.structured_content is not None
    chunks = result.structured_content["chunks"]
    assert isinstance(chunks, int) and chunks >= 5
    return chunks


def assert_fresh_extractive(summary: CallToolResult) -> None:
    """doc_summarize of "d" answered extractively, not from the cache."""
    assert summary.structured_content is not None
    facts = {key: summary.structured_content[key] for key in ("doc_id", "method", "cached")}
    assert facts == {"doc_id": "d", "method": "extractive", "cached": False}


async def test_refused_endpoint_summarizes_extractively_at_once(tmp_path: Path) -> None:
    """Refused: doc_summarize and doc_outline come back extractive, saying the LLM is unavailable, long before the deadline."""
    async with client_for(tmp_path, closed_port_url(), deadline_s=60.0) as (_, client):
        chunks = await ingest(client)
        with trio.fail_after(10):
            summary = await client.call_tool("doc_summarize", {"doc_id": "d", "refresh": True})
            outline = await client.call_tool("doc_outline", {"doc_id": "d", "summarize": True})
    assert_fresh_extractive(summary)
    assert re.search(r"\(extractive\)\. Note: LLM unavailable \([^)]*\); extractive\.", text_of(summary))
    lines = text_of(outline).splitlines()
    assert len([line for line in lines if line.startswith("#")]) == chunks
    assert lines[-1].startswith("Note: LLM unavailable (") and lines[-1].endswith("; extractive")


async def test_hanging_endpoint_summarizes_extractively_by_the_deadline(tmp_path: Path) -> None:
    """Hung from the start: doc_summarize with a 2 s LLM deadline returns extractive with a note saying why."""
    async with trio.open_nursery() as nursery:
        fake = await open_fake_openai(nursery, FakeServer(mode="hang"))
        async with client_for(tmp_path, fake.base_url, deadline_s=2.0) as (_, client):
            await ingest(client)
            with trio.fail_after(2.0 + 5):
                summary = await client.call_tool("doc_summarize", {"doc_id": "d", "refresh": True})
        nursery.cancel_scope.cancel()
    assert_fresh_extractive(summary)
    assert DEGRADED.search(text_of(summary)), text_of(summary)
    assert fake.requests  # the endpoint was asked, and never answered


async def test_a_chat_that_hangs_is_cut_at_the_deadline(tmp_path: Path) -> None:
    """Hung after calibration: the call's own chat request is cut at the 2 s deadline; extractive, 'deadline passed'."""
    async with trio.open_nursery() as nursery:
        fake = await open_fake_openai(nursery)
        async with client_for(tmp_path, fake.base_url, deadline_s=2.0) as (ctx, client):
            cold = ctx.live.tokens.current
            with trio.fail_after(10):
                while ctx.live.tokens.current is cold:  # calibrated: the calibrator sleeps now
                    await trio.sleep(0.01)
            await ingest(client)
            fake.mode = "hang"
            with trio.fail_after(2.0 + 5):
                summary = await client.call_tool("doc_summarize", {"doc_id": "d", "refresh": True})
        nursery.cancel_scope.cancel()
    assert_fresh_extractive(summary)
    assert (
        "(extractive). Note: deadline passed; extractive for now. The LLM summary goes on in the background"
        in text_of(summary)
    )
    assert fake.requests[-1] == ("POST", "/v1/chat/completions")


async def test_tools_list_is_answered_while_the_endpoint_hangs(tmp_path: Path) -> None:
    """The first tools/list is answered while a request to the hung endpoint is still waiting."""
    async with trio.open_nursery() as nursery:
        fake = await open_fake_openai(nursery, FakeServer(mode="hang"))
        with trio.fail_after(10):  # startup included: nothing may wait for the hung request
            async with client_for(tmp_path, fake.base_url, deadline_s=60.0) as (_, client):
                while not fake.requests:  # the calibrator's first request, which will hang
                    await trio.sleep(0.01)
                tools = await client.list_tools()
        nursery.cancel_scope.cancel()
    assert {"doc_summarize", "context_compact"} <= {tool.name for tool in tools.tools}


@pytest.mark.parametrize(("llm", "method"), [(True, "llm"), (False, "extractive")])
async def test_compact_reports_the_method(tmp_path: Path, llm: bool, method: str) -> None:
    """context_compact reports method llm with a working LLM, and extractive with --no-llm."""
    async with trio.open_nursery() as nursery:
        # An answer that passes the summarizer's checks: it keeps the notes' numbers and is short.
        fake = await open_fake_openai(nursery, FakeServer(reply=lambda _: "Notes 0 to 9 cover cache and cursor work."))
        async with client_for(tmp_path, fake.base_url, llm=llm) as (_, client):
            for number in range(12):
                text = f"Note {number}: " + " ".join(WORDS[(number + k) % len(WORDS)] for k in range(40))
                appended = await client.call_tool("context_append", {"session_id": "s", "text": text})
                assert not appended.is_error
            with trio.fail_after(20):
                compacted = await client.call_tool(
                    "context_compact", {"session_id": "s", "keep_recent": 2, "target_tokens": 60}
                )
        nursery.cancel_scope.cancel()
    assert not compacted.is_error and compacted.structured_content is not None
    assert compacted.structured_content["method"] == method
    assert f" tokens, {method}. " in text_of(compacted)
    asked = [prompt for prompt in fake.prompts if "Note 0: " in prompt]
    assert len(asked) == (1 if llm else 0)


async def test_a_slow_summary_does_not_block_other_calls(tmp_path: Path) -> None:
    """While doc_summarize waits on a hung endpoint, session calls on the same server answer."""
    async with trio.open_nursery() as nursery:
        fake = await open_fake_openai(nursery, FakeServer())
        async with client_for(tmp_path, fake.base_url, deadline_s=20.0) as (ctx, client):
            ingested = await client.call_tool("doc_ingest", {"text": document(), "doc_id": "manual"})
            assert not ingested.is_error
            fake.mode = "hang"
            finished: list[str] = []

            async def summarize() -> None:
                result = await client.call_tool("doc_summarize", {"doc_id": "manual", "target_tokens": 60})
                finished.append(text_of(result))

            async with trio.open_nursery() as calls:
                calls.start_soon(summarize)
                await trio.sleep(0.5)  # the summary is now waiting on the endpoint
                with trio.fail_after(5):  # well under the 20 s the summary may take
                    for number in range(5):
                        appended = await client.call_tool(
                            "context_append", {"session_id": "busy", "text": f"note {number}"}
                        )
                        assert not appended.is_error
                    recalled = await client.call_tool("context_recall", {"session_id": "busy", "query": "note"})
                    assert "note 4" in text_of(recalled)
                assert finished == []  # the other calls did not wait for it
                calls.cancel_scope.cancel()
        nursery.cancel_scope.cancel()
