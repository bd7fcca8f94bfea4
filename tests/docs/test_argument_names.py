"""A chunk range's errors name its ends as the caller does: start/end in the library, from/to in the tools."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from mcp import Client
from mcp.types import TextContent

from ctxtrio._app import build_server
from ctxtrio._errors import InputError

from .conftest import opened

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

_TOOL_NAMES = re.compile(r"\b(from|to)=|\b(from|to) must\b")
_LIBRARY_NAMES = re.compile(r"\b(start|end)=|\b(start|end) must\b")
_TEXT = "\n\n".join(f"# Part {n}\n\n" + "word " * 300 for n in range(6))


async def test_library_errors_say_start_and_end(tmp_path: Path) -> None:
    """Every chunk-range error of window, outline and summarize speaks the library's names, never from=/to=."""
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        await docs.ingest(text=_TEXT, doc_id="d")
        while (await docs.window("d", budget_tokens=300)).next_index < 3:  # the cursor moves past #1
            pass
        bad_calls: dict[str, Callable[[], Awaitable[object]]] = {
            "order": lambda: docs.window("d", start=3, end=1),
            "negative start": lambda: docs.window("d", start=-1),
            "negative end": lambda: docs.summarize("d", start=0, end=-2),
            "summary order": lambda: docs.summarize("d", start=3, end=1),
            "outline start": lambda: docs.outline("d", start=-1),
            "before the cursor": lambda: docs.window("d", end=1),
            "outline past the end": lambda: docs.outline("d", start=99),
            "summary past the end": lambda: docs.summarize("d", start=99),
        }
        messages = {}
        for name, call in bad_calls.items():
            with pytest.raises(InputError) as caught:
                await call()
            messages[name] = str(caught.value)
    for name, message in messages.items():
        assert not _TOOL_NAMES.search(message), (name, message)
    assert messages["order"] == "end=1 is before start=3; end is the last chunk to include"
    assert messages["negative start"] == "start must be 0 or more, got -1"
    assert messages["negative end"] == "end must be 0 or more, got -2"
    assert messages["outline start"] == "start must be 0 or more, got -1"
    assert "#1" in messages["before the cursor"] and "past the last chunk #" in messages["summary past the end"]


async def test_tool_errors_say_from_and_to(tmp_path: Path) -> None:
    """The same mistakes through doc_window, doc_summarize and doc_outline name from/to, never start/end."""
    calls: list[tuple[str, dict[str, object], str | None]] = [
        ("doc_window", {"from": 3, "to": 1}, "Error: to=1 is before from=3; to is the last chunk to include"),
        ("doc_window", {"from": -1}, "Error: from must be 0 or more, got -1"),
        ("doc_summarize", {"from": 0, "to": -2}, "Error: to must be 0 or more, got -2"),
        ("doc_summarize", {"from": 3, "to": 1}, "Error: to=1 is before from=3; to is the last chunk to include"),
        ("doc_outline", {"from": -1}, "Error: from must be 0 or more, got -1"),
        ("doc_outline", {"from": 99}, None),
        ("doc_window", {"to": 1, "session_id": "s"}, None),
    ]
    async with opened(tmp_path) as ctx, Client(build_server(ctx)) as client:
        await client.call_tool("doc_ingest", {"text": _TEXT, "doc_id": "d"})
        await client.call_tool("context_open", {"session_id": "s"})
        # the cursor of session s moves past #1 (to #3, or inside #2 when the budget cuts it)
        await client.call_tool(
            "doc_window", {"doc_id": "d", "budget_tokens": 300, "session_id": "s", "from": 2, "to": 2}
        )
        for tool, arguments, expected in calls:
            result = await client.call_tool(tool, {"doc_id": "d", **arguments})
            block = result.content[0]
            assert result.is_error and isinstance(block, TextContent), (tool, arguments)
            assert not _LIBRARY_NAMES.search(block.text), (tool, arguments, block.text)
            if expected is not None:
                assert block.text == expected, (tool, arguments)
