"""Resources through a real MCP client (in-process): list pages, templates, reads packed into the budget."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import TextResourceContents

import ctxtrio
from ctxtrio._app import build_server
from ctxtrio._wiring import open_wiring
from ctxtrio.surface.resources import PAGE_SIZE
from testkit.results import text_of

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._wiring import Wiring
    from ctxtrio.text.tokens import TokenModel

INVALID_PARAMS = -32602


def _config(tmp_path: Path, **changes: object) -> ctxtrio.Config:
    return ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False, **changes)  # type: ignore[arg-type]


async def _text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    (content,) = result.contents
    assert isinstance(content, TextResourceContents) and content.mime_type == "text/plain" and content.uri == uri
    return content.text


async def test_documents_sessions_and_guide_read_as_resources(tmp_path: Path) -> None:
    """A document's outline, a chunk range, a session's status with pins and summary, and the guide are readable."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        text = "# Setup\n\nInstall it.\n\n# Usage\n\n" + "Run the tool with care. " * 400
        await ctx.documents.ingest(text=text, title="Manual", doc_id="man")
        await ctx.sessions.open("work", "refactor")
        await ctx.sessions.append("work", "Goal: keep cookies", pinned=True)
        await ctx.sessions.append("work", "Looked at the login form")
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == [
            "ctxtrio://docs/{doc_id}",
            "ctxtrio://docs/{doc_id}/chunks/{from}-{to}",
            "ctxtrio://sessions/{session_id}",
        ]
        assert all(t.mime_type == "text/plain" for t in templates.resource_templates)
        listed = await client.list_resources()
        assert [r.uri for r in listed.resources] == ["ctxtrio://guide", "ctxtrio://docs/man", "ctxtrio://sessions/work"]
        assert listed.next_cursor is None
        outline = await _text(client, "ctxtrio://docs/man")
        assert outline.startswith("source: inline;") and 'man "Manual":' in outline and "Usage" in outline
        chunks = await _text(client, "ctxtrio://docs/man/chunks/0-0")
        assert chunks.startswith('man "Manual" chunk #0 of ') and "Install it." in chunks
        assert ". Next: #1 (ctxtrio://docs/man/chunks/1-1)." in chunks, chunks  # was 1-0: no resource
        await _text(client, "ctxtrio://docs/man/chunks/1-1")
        session = await _text(client, "ctxtrio://sessions/work")
        assert "Pinned (1):" in session and "Goal: keep cookies" in session and "Looked at" not in session
        assert "No summary yet" in session
        guide = await _text(client, "ctxtrio://guide")
        assert guide.startswith("ctxtrio keeps what does not fit")


async def _three_notes_folded(ctx: Wiring) -> None:
    """Session s: three notes, e2..e4, folded into the summary e5."""
    for n in range(3):
        await ctx.sessions.append("s", f"note {n} about the parser")
    await ctx.sessions.compact("s", keep_recent=0)


async def test_a_sessions_latest_summary_says_what_it_folds_now(tmp_path: Path) -> None:
    """After one of its entries was restored, the session resource said the summary 'folds 3 entries'."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        await _three_notes_folded(ctx)
        await ctx.sessions.update("s", "e3", restore=True)
        session = await _text(client, "ctxtrio://sessions/s")
    assert "\nLatest summary (e5, folds 2 entries of the 3 it summarizes):\n" in session, session


async def test_a_summary_does_not_fold_an_entry_deleted_since(tmp_path: Path) -> None:
    """A folded entry deleted since is out of recall by itself, and an undo leaves it deleted: the session
    resource said the summary 'folds 3 entries', and the undo '3 entries (e2..e4) are live again'."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        await _three_notes_folded(ctx)
        await ctx.sessions.update("s", "e3", delete=True)
        session = await _text(client, "ctxtrio://sessions/s")
        undone = await ctx.sessions.update("s", "e5", restore=True)
        entries = {entry.id: entry.status for entry in await ctx.sessions.export("s")}
    assert "\nLatest summary (e5, folds 2 entries of the 3 it summarizes):\n" in session, session
    assert undone.restored == ("e2", "e4") and entries == {"e2": "live", "e3": "deleted", "e4": "live", "e5": "deleted"}


async def test_reading_chunks_moves_no_cursor(tmp_path: Path) -> None:
    """A resource read is the person's, not the model's: doc_window's cursor stays where it was."""
    async with open_wiring(_config(tmp_path, chunk_tokens=100, chunk_overlap_tokens=0)) as ctx:
        await ctx.documents.ingest(text="\n\n".join(f"Paragraph {i} " + "word " * 80 for i in range(20)), doc_id="d")
        async with Client(build_server(ctx)) as client:
            await _text(client, "ctxtrio://docs/d/chunks/3-5")
        window = await ctx.documents.window("d", budget_tokens=300)
        assert window.chunks[0].index == 0


async def test_list_pages_by_cursor(tmp_path: Path) -> None:
    """resources/list returns bounded pages whose cursors visit every document and session once."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        for i in range(70):
            await ctx.documents.ingest(text=f"document number {i}", doc_id=f"doc-{i:03d}")
        for i in range(40):
            await ctx.sessions.open(f"s-{i:03d}")
        uris: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = await client.list_resources(cursor=cursor)
            assert len(page.resources) <= PAGE_SIZE
            uris += [r.uri for r in page.resources]
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                break
        assert pages == 3 and len(uris) == 111 == len(set(uris))
        with pytest.raises(MCPError) as bad:
            await client.list_resources(cursor="not-a-cursor")
        assert bad.value.code == INVALID_PARAMS


async def test_unknown_resources_are_invalid_params_naming_the_uri(tmp_path: Path) -> None:
    """An unknown URI, document or session is -32602 with the URI in data (SEP-2164), never empty contents."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        for uri in ("test://nothing", "ctxtrio://docs/nope", "ctxtrio://sessions/nope", "ctxtrio://docs/x/chunks/5-1"):
            with pytest.raises(MCPError) as missing:
                await client.read_resource(uri)
            assert missing.value.code == INVALID_PARAMS
            assert missing.value.error.data == {"uri": uri}


async def test_a_read_of_nothing_stored_says_what_to_read_instead(tmp_path: Path) -> None:
    """'no document 'nope'' was all a refused read said, where a tool's refusal names the next step: a read names
    the listing, then the tools' advice (the compact profile's own tools there), as the tools word theirs."""
    for tools, docs, sessions in (
        ("full", "doc_list shows the documents", "context_list_sessions shows existing ones, context_open creates one"),
        (
            "compact",
            "doc_read with a query and no doc_id searches every document",
            "memory with a note creates the session",
        ),
    ):
        async with open_wiring(_config(tmp_path / tools, tools=tools)) as ctx, Client(build_server(ctx)) as client:
            messages = []
            for uri in ("ctxtrio://docs/nope", "ctxtrio://docs/nope/chunks/0-1", "ctxtrio://sessions/nope"):
                with pytest.raises(MCPError) as missing:
                    await client.read_resource(uri)
                messages.append(missing.value.error.message)
        assert messages == [
            f"no document 'nope'; resources/list names every document; {docs}",
            f"no document 'nope'; resources/list names every document; {docs}",
            f"no session 'nope'; resources/list names every session; {sessions}",
        ], messages


async def test_a_backward_chunk_range_is_refused_in_the_uris_words(tmp_path: Path) -> None:
    """The template says {from}-{to}: a range that ends before it starts said 'end=1 is before start=3'."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        await ctx.documents.ingest(text="word " * 3000, doc_id="d")
        with pytest.raises(MCPError) as backward:
            await client.read_resource("ctxtrio://docs/d/chunks/3-1")
    assert backward.value.code == INVALID_PARAMS
    assert backward.value.error.message == "to=1 is before from=3; to is the last chunk to include"


async def test_a_range_past_the_end_names_the_chunks_there_are(tmp_path: Path) -> None:
    """chunks/9-9 of a one-chunk document, and doc_outline / doc_summarize from past the end, said only
    'the first chunk asked for, #9, is past the last chunk #0': no next step. They name the starts there are."""
    async with open_wiring(_config(tmp_path)) as ctx, Client(build_server(ctx)) as client:
        await ctx.documents.ingest(text="One paragraph.", doc_id="d")
        last = (await ctx.documents.ingest(text="word " * 3000, doc_id="m")).doc.chunks - 1
        with pytest.raises(MCPError) as past:
            await client.read_resource("ctxtrio://docs/d/chunks/9-9")
        outline = await client.call_tool("doc_outline", {"doc_id": "m", "from": 30})
        summary = await client.call_tool("doc_summarize", {"doc_id": "d", "from": 9})
    assert past.value.code == INVALID_PARAMS
    assert past.value.error.message == "the first chunk asked for, #9, is past the last chunk #0: pass from=0"
    assert outline.is_error and text_of(outline) == (
        f"Error: the first chunk asked for, #30, is past the last chunk #{last}: pass from=0 to {last}"
    )
    assert summary.is_error and text_of(summary).endswith("past the last chunk #0: pass from=0")


async def test_a_large_read_stays_within_the_budget(tmp_path: Path) -> None:
    """Reading every chunk of a 3 MB document returns one budget's worth, and says where to go on."""
    text = "\n\n".join(f"## Part {i}\n\n" + f"Line {i} of the log, nothing unusual here. " * 30 for i in range(2500))
    config = _config(tmp_path, budget_tokens=2000, max_ingest_chars=len(text) + 1)
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        await ctx.documents.ingest(text=text, doc_id="big")
        model: TokenModel = ctx.live.tokens.current
        for uri in ("ctxtrio://docs/big", "ctxtrio://docs/big/chunks/0-999999"):
            read = await _text(client, uri)
            assert model.estimate(read) <= 2000, uri
        assert "(ctxtrio://docs/big/chunks/" in read


_PARTS = "\n\n".join(
    f"# Part {part}\n\n" + " ".join(f"item{part}x{n} says something about the parser and the build" for n in range(60))
    for part in range(3)
)


async def test_a_chunk_range_at_a_small_budget_shows_what_its_head_says(tmp_path: Path) -> None:
    """The chunks resource keeps its head's room out of the text's, as doc_window does: at CTX_BUDGET=200 it
    showed 8 tokens of chunk #1, and at 150 its head said 65 tokens of text, cut to fewer after it was counted."""
    for budget in (150, 200, 300):
        async with open_wiring(_config(tmp_path / str(budget), budget_tokens=budget)) as ctx:
            await ctx.documents.ingest(text=_PARTS, doc_id="d")
            model: TokenModel = ctx.live.tokens.current
            async with Client(build_server(ctx)) as client:
                read = await _text(client, "ctxtrio://docs/d/chunks/1-2")
            head, _, text = read.partition("\n\n[#1 · Part 0]\n")
            assert model.estimate(read) <= budget and "[cut to fit" not in read, read
            assert f"({model.estimate(text)} tokens, estimated)" in head and model.estimate(text) >= 40, read
            assert head.endswith(
                ". Next: #2 (ctxtrio://docs/d/chunks/2-2). #1 was cut: doc_window from=1 with more budget_tokens reads it whole."
            ), head


async def test_a_budget_too_small_for_a_chunk_range_says_what_would_hold_it(tmp_path: Path) -> None:
    """A budget that cannot hold the head and a few tokens of text is refused saying what budget would, as
    doc_window's is; a range that starts with a short chunk is shown whole and not said to be cut."""
    async with open_wiring(_config(tmp_path, budget_tokens=80)) as ctx, Client(build_server(ctx)) as client:
        await ctx.documents.ingest(text=_PARTS, doc_id="d")
        with pytest.raises(MCPError) as small:
            await client.read_resource("ctxtrio://docs/d/chunks/1-2")
        heading = await _text(client, "ctxtrio://docs/d/chunks/0-2")
    assert small.value.code == INVALID_PARAMS
    assert small.value.error.message.startswith("the budget of 80 tokens cannot hold chunk #1 of d: "), small.value
    assert re.search(
        r"\. A budget of \d+ tokens or more reads its start, or about \d+ reads it whole\.$", small.value.error.message
    )
    assert heading.endswith(". Next: #1 (ctxtrio://docs/d/chunks/1-2).\n\n[#0 · Part 0]\n# Part 0\n\n"), heading
