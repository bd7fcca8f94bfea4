"""Prompts and completion through a real MCP client (in-process)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import EmbeddedResource, PromptReference, ResourceTemplateReference, TextContent, TextResourceContents

import ctxtrio
from ctxtrio._app import build_server
from ctxtrio._wiring import open_wiring

if TYPE_CHECKING:
    from pathlib import Path

INVALID_PARAMS = -32602


def _config(tmp_path: Path, tools: str = "full") -> ctxtrio.Config:
    return ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools=tools)  # type: ignore[arg-type]


async def test_the_workflows_are_prompts_with_ids_filled_in(tmp_path: Path) -> None:
    """Each prompt names the exact tools with the ids given; resume_session attaches the session resource."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        await ctx.sessions.append("work", "Goal: ship it", pinned=True)
        await ctx.documents.ingest(text="The port is 8080.", title="Config", doc_id="conf")
        listed = await client.list_prompts()
        assert [p.name for p in listed.prompts] == [
            "resume_session",
            "answer_from_document",
            "compact_session",
            "start_task",
        ]
        assert all(p.description for p in listed.prompts)
        resume = await client.get_prompt("resume_session", {"session_id": "work"})
        first, attached = resume.messages
        assert isinstance(first.content, TextContent) and 'context_recall with session_id="work"' in first.content.text
        assert isinstance(attached.content, EmbeddedResource)
        resource = attached.content.resource
        assert isinstance(resource, TextResourceContents) and "Goal: ship it" in resource.text
        answer = await client.get_prompt("answer_from_document", {"doc_id": "conf", "question": "Which port?"})
        assert isinstance(answer.messages[0].content, TextContent)
        assert 'doc_search with doc_id="conf"' in answer.messages[0].content.text
        assert "Which port?" in answer.messages[0].content.text
        compact = await client.get_prompt("compact_session", {"session_id": "work"})
        assert isinstance(compact.messages[0].content, TextContent)
        assert 'context_compact with session_id="work"' in compact.messages[0].content.text
        start = await client.get_prompt("start_task", {"task": "Fix the login bug"})
        assert isinstance(start.messages[0].content, TextContent)
        assert start.messages[0].content.text.startswith("New task: Fix the login bug")


async def test_compact_profile_prompts_name_its_tools(tmp_path: Path) -> None:
    """With --tools compact the prompts call memory and doc_read, which that profile serves."""
    async with open_wiring(_config(tmp_path, "compact")) as ctx, Client(build_server(ctx)) as client:
        await ctx.documents.ingest(text="The port is 8080.", doc_id="conf")
        answer = await client.get_prompt("answer_from_document", {"doc_id": "conf", "question": "Which port?"})
        assert isinstance(answer.messages[0].content, TextContent)
        assert 'doc_read with doc_id="conf"' in answer.messages[0].content.text
        assert "doc_search" not in answer.messages[0].content.text
        start = await client.get_prompt("start_task", {"task": "x", "session_id": "s1"})
        assert isinstance(start.messages[0].content, TextContent)
        assert 'memory with session_id="s1"' in start.messages[0].content.text


async def test_bad_prompt_requests_are_invalid_params(tmp_path: Path) -> None:
    """An unknown prompt, a missing argument, a bad id or an unknown document is -32602 with a clear message."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        cases = [
            ("nope", {}),
            ("resume_session", {}),
            ("resume_session", {"session_id": "../etc"}),
            ("answer_from_document", {"doc_id": "missing", "question": "q"}),
        ]
        for name, arguments in cases:
            with pytest.raises(MCPError) as bad:
                await client.get_prompt(name, arguments)
            assert bad.value.code == INVALID_PARAMS, (name, arguments)
        assert bad.value.error.message == "no document 'missing'; doc_list shows the documents"  # the tools' advice


async def test_ids_complete_by_prefix_bounded(tmp_path: Path) -> None:
    """doc_id and session_id complete from the store by prefix, at most 100 values with the total."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        for i in range(120):
            await ctx.documents.ingest(text=f"doc {i}", doc_id=f"log-{i:03d}")
        await ctx.documents.ingest(text="other", doc_id="notes")
        await ctx.sessions.open("Refactor-auth")
        await ctx.sessions.open("release")
        docs = await client.complete(
            ResourceTemplateReference(uri="ctxtrio://docs/{doc_id}"), {"name": "doc_id", "value": "log-"}
        )
        assert len(docs.completion.values) == 100 and docs.completion.total == 120 and docs.completion.has_more
        assert docs.completion.values[0] == "log-000"
        one = await client.complete(PromptReference(name="answer_from_document"), {"name": "doc_id", "value": "no"})
        assert one.completion.values == ["notes"] and one.completion.has_more is False
        sessions = await client.complete(PromptReference(name="resume_session"), {"name": "session_id", "value": "re"})
        assert sessions.completion.values == ["Refactor-auth", "release"]
        chunk_doc = await client.complete(
            ResourceTemplateReference(uri="ctxtrio://docs/{doc_id}/chunks/{from}-{to}"),
            {"name": "doc_id", "value": "notes"},
        )
        assert chunk_doc.completion.values == ["notes"]
        free_text = await client.complete(
            PromptReference(name="answer_from_document"), {"name": "question", "value": "w"}
        )
        assert free_text.completion.values == []
        with pytest.raises(MCPError) as unknown:
            await client.complete(PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": "x"})
        assert unknown.value.code == INVALID_PARAMS
