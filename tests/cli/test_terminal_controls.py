"""What the CLI writes for people holds no character a terminal would obey: stored text is anyone's."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import trio
from mcp import Client

from ctxtrio.cli.output import harmless

from .runner import cli, server

if TYPE_CHECKING:
    from pathlib import Path

#: Clear the screen (ESC[2J), set the window title (OSC ... BEL), C1 CSI, a right-to-left override.
NASTY = "\x1b[2J\x1b]0;owned\x07\x9b2J\u202e"
OBEYED = ("\x1b", "\x07", "\x9b", "\u202e")


def test_harmless_escapes_controls_and_keeps_tabs_and_lines() -> None:
    assert harmless(f"a{NASTY}\tb\r\nc\rd\x7f") == "a\\x1b[2J\\x1b]0;owned\\x07\\x9b2J\\u202e\tb\nc\\x0dd\\x7f"
    assert harmless("plain é — 名前") == "plain é — 名前"


async def test_docs_search_and_show_escape_stored_controls(tmp_path: Path) -> None:
    """A file named and a document holding terminal escapes is listed, searched and shown escaped;
    --json keeps the very text (its escapes parse back to it)."""
    data, docs = tmp_path / "data", tmp_path / "docs"
    docs.mkdir()
    name = f"evil{NASTY}.md"
    (docs / name).write_text(f"# Cookies {NASTY}\n\nThe cookie middleware {NASTY} expects a session.\n")
    with trio.fail_after(120):
        async with Client(server(data)) as client:
            await client.call_tool("context_open", {"session_id": "s1", "title": f"Title {NASTY}"})
            await client.call_tool("context_append", {"session_id": "s1", "text": f"entry {NASTY}\nsecond line"})
    ingested = await cli(data, "ingest", str(docs))
    assert ingested.code == 0, ingested.err
    runs = [
        await cli(data, "docs"),
        await cli(data, "search", "cookie", "middleware"),
        await cli(data, "search", "cookie", "--full"),
        await cli(data, "sessions"),
        await cli(data, "show", "s1"),
    ]
    for ran in runs:
        assert ran.code == 0, ran.err
        assert "\\x1b[2J" in ran.out, ran.out
        assert not any(control in ran.out + ran.err for control in OBEYED), ran.out
    listed = await cli(data, "docs", "--json")
    assert not any(control in listed.out for control in OBEYED)
    assert [doc["source"] for doc in listed.json()] == [str(docs / name)]
    shown = await cli(data, "show", "s1", "--json")
    assert json.loads(shown.out)["entries"][0]["text"] == f"entry {NASTY}\nsecond line"
    # export is read by import, not by people: its bytes stay JSON's own (C0 escaped, the rest as stored).
    exported = await cli(data, "export", "s1")
    assert "\\u001b[2J" in exported.out and "\x9b2J\u202e" in exported.out
