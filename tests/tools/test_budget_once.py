"""The budget is checked once, by the service: what a tool caller sees through a real stdio server."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
from mcp import Client

from ctxtrio._errors import InputError
from ctxtrio._limits import SEARCH_LIMIT
from ctxtrio.tools.spec import BUDGET_PARAM, Param, parse_arguments
from testkit.results import text_of

from ..cli.runner import server

if TYPE_CHECKING:
    from pathlib import Path

BAD = "budget_tokens must be between 50 and 100000, got 10"


def test_parse_arguments_leaves_the_budget_bounds_to_the_service() -> None:
    """A budget out of bounds passes the argument check (the service refuses it); one that is no integer, or another bound, does not."""
    assert parse_arguments((BUDGET_PARAM,), {"budget_tokens": 10}).opt_integer("budget_tokens") == 10
    with pytest.raises(InputError, match="budget_tokens must be an integer"):
        parse_arguments((BUDGET_PARAM,), {"budget_tokens": "ten"})
    with pytest.raises(InputError, match="limit must be between 1 and 50, got 0"):
        parse_arguments((Param("limit", "integer", bounds=SEARCH_LIMIT),), {"limit": 0})


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


async def test_with_two_bad_arguments_the_argument_check_comes_first(tmp_path: Path) -> None:
    """limit=0 beside a bad budget gets limit's error (checked with the arguments); a wordless query gets the budget's (the service checks the budget first)."""
    with trio.fail_after(90):
        async with Client(server(tmp_path / "data")) as client:
            limit = await client.call_tool("doc_search", {"query": "step", "budget_tokens": 10, "limit": 0})
            assert limit.is_error and "limit must be between 1 and 50, got 0" in text_of(limit)
            typed = await client.call_tool("doc_search", {"query": "step", "budget_tokens": 10, "limit": "ten"})
            assert typed.is_error and "limit must be an integer" in text_of(typed)
            wordless = await client.call_tool("doc_search", {"query": "the", "budget_tokens": 10})
            assert wordless.is_error and BAD in text_of(wordless), text_of(wordless)
