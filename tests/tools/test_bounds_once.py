"""Bounds are checked once, by the service, and advertised in the schema: what a tool caller sees."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
from mcp import Client

from ctxtrio._app import build_server
from ctxtrio._errors import InputError
from ctxtrio._limits import SEARCH_LIMIT
from ctxtrio.tools import spec
from ctxtrio.tools.spec import BUDGET_PARAM, Param, parse_arguments
from testkit.results import text_of

from ..cli.runner import server
from ..docs.conftest import opened

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._json import JSON

BAD = "budget_tokens must be between 50 and 100000, got 10"


def test_parse_arguments_leaves_the_bounds_to_the_service() -> None:
    """Values out of bounds pass the argument check (the service refuses them); one that is no integer does not."""
    limit = Param("limit", "integer", bounds=SEARCH_LIMIT)
    args = parse_arguments((BUDGET_PARAM, limit), {"budget_tokens": 10, "limit": 0})
    assert (args.opt_integer("budget_tokens"), args.opt_integer("limit")) == (10, 0)
    with pytest.raises(InputError, match="budget_tokens must be an integer"):
        parse_arguments((BUDGET_PARAM,), {"budget_tokens": "ten"})


async def test_a_bad_budget_reads_the_same_in_every_tool_that_takes_one(tmp_path: Path) -> None:
    """doc_search, doc_window, context_recall (full) and memory, doc_read (compact) answer the service's error, and the schema still shows the bounds."""
    full: list[tuple[str, dict[str, object]]] = [
        ("doc_search", {"query": "step"}),
        ("doc_window", {"doc_id": "log"}),
        ("context_recall", {"session_id": "s"}),
    ]
    compact: list[tuple[str, dict[str, object]]] = [
        ("memory", {"session_id": "s", "query": "step"}),
        ("memory", {"session_id": "s", "note": "kept?", "query": "kept"}),
        ("memory", {"session_id": "s", "note": "kept?"}),
        ("doc_read", {"query": "step"}),
        ("doc_read", {"doc_id": "log"}),
    ]
    with trio.fail_after(120):
        for profile, calls in (("full", full), ("compact", compact)):
            async with Client(server(tmp_path / "data", "--tools", profile)) as client:
                await client.call_tool("doc_ingest", {"text": "# Log\n\nstep 42 failed\n", "doc_id": "log"})
                for tool, arguments in calls:
                    result = await client.call_tool(tool, {**arguments, "budget_tokens": 10})
                    assert result.is_error and BAD in text_of(result), (tool, text_of(result))
                schema = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
                for tool, _ in calls:
                    assert schema[tool]["properties"]["budget_tokens"] == {
                        "type": "integer",
                        "minimum": 50,
                        "maximum": 100000,
                    }
    assert not list((tmp_path / "data" / "sessions").glob("*.jsonl"))  # no note was stored by a refused memory call


async def test_with_two_bad_arguments_the_type_check_comes_first_then_the_services_order(tmp_path: Path) -> None:
    """A mistyped argument's error first; then the service's: the budget before limit (before this change limit's won), a wordless query too."""
    with trio.fail_after(90):
        async with Client(server(tmp_path / "data")) as client:
            limit = await client.call_tool("doc_search", {"query": "step", "budget_tokens": 10, "limit": 0})
            assert limit.is_error and BAD in text_of(limit), text_of(limit)
            typed = await client.call_tool("doc_search", {"query": "step", "budget_tokens": 10, "limit": "ten"})
            assert typed.is_error and "limit must be an integer" in text_of(typed)
            wordless = await client.call_tool("doc_search", {"query": "the", "budget_tokens": 10})
            assert wordless.is_error and BAD in text_of(wordless), text_of(wordless)


_TEXT = "\n\n".join(f"# Part {n}\n\n" + "word " * 300 for n in range(6))

#: (tool, arguments, the error) for each bounded argument out of bounds, named as the tool calls it.
_OUT_OF_BOUNDS: list[tuple[str, dict[str, object], str]] = [
    ("doc_search", {"query": "word", "limit": 0}, "limit must be between 1 and 50, got 0"),
    ("doc_outline", {"doc_id": "d", "max_chunks": 501}, "max_chunks must be between 1 and 500, got 501"),
    ("doc_outline", {"doc_id": "d", "from": -1}, "from must be 0 or more, got -1"),
    ("doc_window", {"doc_id": "d", "to": -1}, "to must be 0 or more, got -1"),
    ("doc_summarize", {"doc_id": "d", "target_tokens": 1}, "target_tokens must be between 50 and 8000, got 1"),
    ("doc_summarize", {"doc_id": "d", "from": -3}, "from must be 0 or more, got -3"),
    ("doc_list", {"from": -1}, "from must be 0 or more, got -1"),
    ("context_recall", {"session_id": "s", "limit": 201}, "limit must be between 1 and 200, got 201"),
    ("context_compact", {"session_id": "s", "keep_recent": -1}, "keep_recent must be between 0 and 500, got -1"),
    ("context_compact", {"session_id": "s", "target_tokens": 1}, "target_tokens must be between 50 and 20000, got 1"),
]

#: Two bad arguments: which error wins now (the service's order: an id's form, then the budget, then the rest).
_TWO_BAD: list[tuple[str, dict[str, object], str]] = [
    ("doc_outline", {"doc_id": "d", "max_chunks": 0, "from": -1}, "from must be 0 or more"),  # was max_chunks
    ("doc_outline", {"doc_id": "bad id!", "max_chunks": 0}, "invalid doc_id"),  # was max_chunks
    ("doc_window", {"doc_id": "d", "from": -1, "budget_tokens": 10}, BAD),  # was from
    ("doc_window", {"doc_id": "bad id!", "from": -1}, "invalid doc_id"),  # was from
    ("doc_summarize", {"doc_id": "bad id!", "target_tokens": 1}, "invalid doc_id"),  # was target_tokens
    ("doc_summarize", {"doc_id": "d", "target_tokens": 1, "from": -1}, "target_tokens must be"),  # was from
    ("context_recall", {"session_id": "s", "limit": 0, "budget_tokens": 10}, BAD),  # was limit
    ("context_recall", {"session_id": "bad id!", "limit": 0}, "limit must be"),  # unchanged
    ("context_compact", {"session_id": "s", "keep_recent": -1, "target_tokens": 1}, "keep_recent must be"),  # unchanged
]


async def test_every_bound_is_the_services_named_as_the_tool_calls_it(tmp_path: Path) -> None:
    """Each bounded argument out of bounds gets the service's error in the tool's words (from, not start); the schema shows the bounds."""
    async with opened(tmp_path) as ctx, Client(build_server(ctx)) as client:
        await ctx.documents.ingest(text=_TEXT, doc_id="d")
        await ctx.sessions.append("s", "a note about words")
        schema = {tool.name: tool.input_schema["properties"] for tool in (await client.list_tools()).tools}
        for tool, arguments, error in _OUT_OF_BOUNDS:
            result = await client.call_tool(tool, arguments)
            assert result.is_error and text_of(result) == f"Error: {error}", (tool, arguments, text_of(result))
            for name in arguments:
                if name in ("limit", "max_chunks", "from", "to", "target_tokens", "keep_recent"):
                    assert "minimum" in schema[tool][name], (tool, name)
        for tool, arguments, error in _TWO_BAD:
            result = await client.call_tool(tool, arguments)
            assert result.is_error and error in text_of(result), (tool, arguments, text_of(result))


async def test_the_compact_profile_parses_each_argument_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """doc_read and memory run the full tools' handlers on the arguments they parsed, not parsed again; a call with neither query nor doc_id says either will do."""
    seen: list[str] = []
    coerce = spec._coerce

    def counted(param: Param, value: object) -> JSON:
        seen.append(param.name)
        return coerce(param, value)

    monkeypatch.setattr(spec, "_coerce", counted)
    async with opened(tmp_path, tools="compact") as ctx, Client(build_server(ctx)) as client:
        await ctx.documents.ingest(text=_TEXT, doc_id="d")
        read = await client.call_tool("doc_read", {"doc_id": "d", "from": "1", "budget_tokens": 200})
        assert not read.is_error and "#1" in text_of(read), text_of(read)
        assert sorted(seen) == ["budget_tokens", "doc_id", "from"]
        seen.clear()
        stored = await client.call_tool("memory", {"session_id": "s", "note": "kept", "query": "kept"})
        assert not stored.is_error and sorted(seen) == ["note", "query", "session_id"], seen
        missing = await client.call_tool("doc_read", {})
        assert missing.is_error and text_of(missing) == (
            "Error: give query to search every document, or doc_id to read one in order"
        )
