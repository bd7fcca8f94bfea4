"""--tools compact: five combined tools under 3,000 characters, served by the real stdio server."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
import trio
from mcp import Client
from mcp.types import TextContent

from ctxtrio._app import build_server
from ctxtrio._config import Config
from ctxtrio._errors import InputError
from ctxtrio._wiring import open_wiring
from testkit.tool_list import listed_chars

from ..cli.runner import server

if TYPE_CHECKING:
    from pathlib import Path


async def test_compact_profile_lists_five_tools_within_3000_chars_and_works(tmp_path: Path) -> None:
    """tools/list is small; memory stores and recalls in one call; doc_read searches and reads; the guide says which."""
    with trio.fail_after(90):
        async with Client(server(tmp_path / "data", "--tools", "compact")) as client:
            tools = (await client.list_tools()).tools
            assert [tool.name for tool in tools] == [
                "context_guide",
                "memory",
                "context_compact",
                "doc_ingest",
                "doc_read",
            ]
            size = listed_chars([tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools])
            assert size <= 3000, size
            stored = await client.call_tool(
                "memory", {"session_id": "s", "note": "Goal: JWT", "pinned": True, "query": "JWT"}
            )
            block = stored.content[0]
            assert isinstance(block, TextContent) and not stored.is_error
            assert block.text.startswith("Stored e2") and "[e2 note pinned] Goal: JWT" in block.text
            await client.call_tool("doc_ingest", {"text": "# Log\n\nOutOfMemoryError in step 42\n", "doc_id": "log"})
            found = await client.call_tool("doc_read", {"query": "OutOfMemoryError"})
            read = await client.call_tool("doc_read", {"doc_id": "log"})
            assert "step 42" in str(found.content) and "step 42" in str(read.content)
            guide = await client.call_tool("context_guide", {})
            assert "compact profile" in str(guide.content) and "doc_read" in str(guide.content)


async def test_full_profile_is_the_default(tmp_path: Path) -> None:
    """Without --tools the server lists the full table, and its guide names the compact profile."""
    with trio.fail_after(90):
        async with Client(server(tmp_path / "data")) as client:
            tools = (await client.list_tools()).tools
            assert len(tools) == 15 and "memory" not in {tool.name for tool in tools}
            guide = await client.call_tool("context_guide", {})
            assert "--tools compact" in str(guide.content)


#: The full profile's tools this profile does not offer, and doc_window's reset argument (doc_read has none).
_NOT_OFFERED = re.compile(
    r"\b(context_(?:open|append|recall|status|update|list_sessions)|doc_(?:outline|search|window|summarize|list|forget)"
    r"|reset=)"
)


async def test_compact_answers_name_only_the_tools_it_offers(tmp_path: Path) -> None:
    """Every answer and error of the compact profile points at its own five tools: a small model told to call
    doc_window or context_open gets "there is no tool". They named the full profile's: ingest's "Next: doc_outline,
    doc_search or doc_window", doc_read's "(call doc_window again)" and "reset=true", a cut search hit's "Whole:
    doc_window", compaction's "Undo: context_update", and errors' "context_list_sessions ..., context_open creates one"
    and "doc_list shows the documents"."""
    text = "\n\n".join(f"# Part {n}\n\n" + f"alpha{n} words here. " * 120 for n in range(4))
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools="compact")
    calls: list[tuple[str, dict[str, object]]] = [
        ("memory", {"session_id": "new", "query": "anything"}),
        ("doc_ingest", {"text": text, "doc_id": "d"}),
        ("doc_ingest", {"text": text, "doc_id": "d"}),
        ("doc_read", {"doc_id": "d", "budget_tokens": 200}),
        ("doc_read", {"doc_id": "d", "from": 3}),
        ("doc_read", {"doc_id": "d"}),
        ("doc_read", {"doc_id": "d", "from": 9}),
        ("doc_read", {"query": "alpha2 words", "budget_tokens": 100}),
        ("doc_read", {"doc_id": "nope"}),
        ("doc_read", {"query": "alpha1", "doc_id": "nope"}),
        ("doc_read", {"doc_id": "d", "session_id": "never-opened"}),
        ("doc_read", {"query": "zebra"}),  # no chunk matches: 'Try other words, or doc_outline ...'
        ("memory", {"session_id": "s", "note": "fact 1 about the build"}),
        ("memory", {"session_id": "s", "note": "fact 2 about the tests"}),
        ("memory", {"session_id": "s", "note": "fact 3 about the deploy"}),
        ("context_compact", {"session_id": "s", "keep_recent": 0}),
        ("context_compact", {"session_id": "gone"}),
        # A pin over the budget: nothing to fold, and the warning says what helps without naming context_update.
        ("memory", {"session_id": "p", "note": "Constraint: " + "keep every word. " * 900, "pinned": True}),
    ]
    answers: list[str] = []
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            block = result.content[0]
            assert isinstance(block, TextContent)
            answers.append(f"{name} {str(arguments)[:60]}: {block.text[:2000]}")
    named = [answer for answer in answers if _NOT_OFFERED.search(answer.partition(": ")[2])]
    assert named == [], "\n".join(named)
    assert "Whole: doc_read [doc_id #from]" in answers[7] and "(call doc_read again)" in answers[3], answers
    assert "nothing left to fold" in answers[-1], answers[-1]


async def test_doc_read_without_query_or_doc_id_says_either_will_do(tmp_path: Path) -> None:
    """doc_read with neither argument names both ways to call it; it said "doc_id is required", as if a query
    alone were not enough."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools="compact")
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        result = await client.call_tool("doc_read", {"budget_tokens": 500})
    block = result.content[0]
    assert result.is_error and isinstance(block, TextContent)
    assert block.text == "Error: give query to search every document, or doc_id to read one in order"


async def test_memory_refuses_text_naming_note(tmp_path: Path) -> None:
    """memory with context_append's text='...' ignored it and only recalled: the note was never stored, unsaid."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools="compact")
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        await client.call_tool("memory", {"session_id": "s", "note": "fact A"})
        result = await client.call_tool("memory", {"session_id": "s", "text": "fact B"})
    block = result.content[0]
    assert result.is_error and isinstance(block, TextContent)
    assert block.text == "Error: unknown argument 'text': did you mean note? Nothing was done."


async def test_memory_errors_name_its_note_argument(tmp_path: Path) -> None:
    """memory calls its text 'note': an empty or too long one said "text is empty" / "text has ... characters",
    an argument memory does not have; context_append still says text."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools="compact")
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        said = []
        for note in ("  ", "x" * 16_001):
            result = await client.call_tool("memory", {"session_id": "s", "note": note})
            block = result.content[0]
            assert result.is_error and isinstance(block, TextContent)
            said.append(block.text)
        with pytest.raises(InputError, match="^text is empty"):
            await ctx.sessions.append("s", "  ")
    assert said[0] == "Error: note is empty: give the fact, decision or note to store", said
    assert said[1].startswith("Error: note has 16001 characters, over the 16000 an entry may hold"), said


async def test_the_compact_profile_undoes_a_compaction(tmp_path: Path) -> None:
    """The full profile undoes a compaction with context_update restore=true, which this profile lacks: a compaction
    here could not be undone, and its answer dropped the 'Undo:' sentence. context_compact undo=<summary id> does it."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools="compact")
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        for n in range(3):
            await client.call_tool("memory", {"session_id": "s", "note": f"fact {n} about the build"})
        folded = await client.call_tool("context_compact", {"session_id": "s", "keep_recent": 0})
        one = await client.call_tool("context_compact", {"session_id": "s", "undo": "e3"})
        undone = await client.call_tool("context_compact", {"session_id": "s", "undo": "e5"})
        bad = await client.call_tool("context_compact", {"session_id": "s", "undo": "../e5"})
        recalled = await client.call_tool("memory", {"session_id": "s"})
    results = (folded, one, undone, bad, recalled)
    texts = [block.text for result in results for block in result.content[:1] if isinstance(block, TextContent)]
    assert texts[0].startswith("Folded 3 entries (e2..e4) into e5: ") and " Undo: context_compact undo=e5." in texts[0]
    assert "so recall may show both: context_compact undo=e5 undoes that compaction" in texts[1], texts[1]
    assert texts[2].startswith("Undid compaction e5: 2 entries (e2, e4) are live again."), texts[2]  # not 'e2..e4'
    assert bad.is_error and texts[3].startswith("Error: invalid undo '../e5'"), texts[3]
    assert [line[:4] for line in texts[4].splitlines() if line.startswith("[")] == ["[e2 ", "[e3 ", "[e4 "], texts[4]


async def test_memory_refuses_a_count_naming_the_budget(tmp_path: Path) -> None:
    """memory has no limit: top_k=3 was ignored (the answer took what fit the budget); it names budget_tokens."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools="compact")
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        await client.call_tool("memory", {"session_id": "s", "note": "the build uses trio"})
        result = await client.call_tool("memory", {"session_id": "s", "query": "build", "top_k": 3})
        block = result.content[0]
        assert result.is_error and isinstance(block, TextContent)
        assert block.text == (
            "Error: unknown argument 'top_k': this tool takes no count of results; budget_tokens bounds its answer. "
            "Nothing was done."
        )


async def test_an_undo_asked_as_a_dry_run_is_refused_and_undoes_nothing(tmp_path: Path) -> None:
    """context_compact undo=e5 dry_run=true undid the compaction at once: dry_run was ignored beside undo, so a
    model asking what an undo would bring back got it done. It is refused, and the entries stay folded."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools="compact")
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        for n in range(3):
            await client.call_tool("memory", {"session_id": "s", "note": f"fact {n} about the build"})
        await client.call_tool("context_compact", {"session_id": "s", "keep_recent": 0})
        asked = await client.call_tool("context_compact", {"session_id": "s", "undo": "e5", "dry_run": True})
        recalled = await client.call_tool("memory", {"session_id": "s"})
    said = [
        block.text for result in (asked, recalled) for block in result.content[:1] if isinstance(block, TextContent)
    ]
    assert asked.is_error and said[0].startswith("Error: undo=e5 with dry_run=true: an undo has no preview"), said[0]
    assert said[0].endswith("Nothing was done."), said[0]
    assert [line[:4] for line in said[1].splitlines() if line.startswith("[")] == ["[e5 "], said[1]


async def test_a_recall_matching_only_a_folded_entry_names_the_undo_of_this_profile(tmp_path: Path) -> None:
    """memory's recall names a folded entry the query matches with context_compact undo=<summary>, not the full
    profile's context_update restore, which this profile lacks."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools="compact")
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        for n in range(12):
            await client.call_tool("memory", {"session_id": "s", "note": f"Decision {n}: retry webhook batch {n}."})
        await client.call_tool("memory", {"session_id": "s", "note": "Tried SERIALIZABLE isolation: deadlocks."})
        for n in range(12):
            await client.call_tool("memory", {"session_id": "s", "note": f"Decision {n + 12}: page for batch {n}."})
        await client.call_tool("context_compact", {"session_id": "s", "keep_recent": 1, "target_tokens": 60})
        recalled = await client.call_tool("memory", {"session_id": "s", "query": "serializable isolation"})
    text = recalled.content[0].text if isinstance(recalled.content[0], TextContent) else ""
    assert (
        "(no unpinned entry matches the query; e14 matches it, folded into e27 by a compaction: "
        "context_compact undo=e27 brings it back)" in text
    ), text


async def test_blank_fields_beside_the_ones_meant_do_what_those_say(tmp_path: Path) -> None:
    """A small model fills every field: memory note='' with a query, doc_read query='' with a doc_id and
    context_compact undo='' were refused ('note is empty', 'query is empty', "invalid undo ''"); a blank field
    beside the one meant is now none. A blank note alone is still refused."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False, tools="compact")
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        for n in range(3):
            await client.call_tool("memory", {"session_id": "s", "note": f"fact {n} about the build"})
        await client.call_tool("doc_ingest", {"doc_id": "d", "text": "Popen.kill sends SIGKILL to the child."})
        calls = (
            ("memory", {"session_id": "s", "note": "", "query": "build", "pinned": ""}),
            ("doc_read", {"doc_id": "d", "query": "", "from": "", "session_id": ""}),
            ("context_compact", {"session_id": "s", "undo": "", "keep_recent": 0}),
            ("memory", {"session_id": "s", "note": " "}),
        )
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
    texts = [block.text for result in results for block in result.content[:1] if isinstance(block, TextContent)]
    assert not any(result.is_error for result in results[:3]), texts
    assert "[e2 note] fact 0 about the build" in texts[0], texts[0]
    assert texts[1].startswith('d "Popen.kill sends SIGKILL to the child." chunk #0 of 1 '), texts[1]
    assert texts[2].startswith("Folded 3 entries (e2..e4) into e5: "), texts[2]
    assert results[3].is_error and texts[3] == "Error: note is empty: give the fact, decision or note to store"
