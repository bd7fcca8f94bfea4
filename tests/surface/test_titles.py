"""Titles and file names reach tool answers and resources harmless: no character a terminal or a bidi
renderer would obey, whether the title came from a ``title`` argument, a first heading or a file's name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp import Client
from mcp.types import EmbeddedResource, TextContent, TextResourceContents

import ctxtrio
from ctxtrio._app import build_server
from ctxtrio._wiring import open_wiring

if TYPE_CHECKING:
    from pathlib import Path

#: Clear the screen, set the window's title (OSC ... BEL), C1 CSI, DEL, a right-to-left override, an isolate.
NASTY = "\x1b[2J\x1b]0;owned\x07\x9b2J\x7f\u202eevil\u2066x\u2069"
OBEYED = ("\x1b", "\x07", "\x9b", "\x7f", "\u202e", "\u2066", "\u2069")


def _obeyed(text: str) -> list[str]:
    return [control for control in OBEYED if control in text]


def _text(content: object) -> str:
    if isinstance(content, EmbeddedResource) and isinstance(content.resource, TextResourceContents):
        return content.resource.text
    assert isinstance(content, TextContent), content
    return content.text


async def test_hostile_titles_and_file_names_are_shown_as_escapes(tmp_path: Path) -> None:
    """Every tool answer and resource naming a document or a session shows its title's controls as escapes."""
    files = tmp_path / "files"
    files.mkdir()
    named = files / f"name{NASTY}\nsecond line.md"
    named.write_text("Widgets are counted here.\n")
    config = ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False, ingest_roots=(files,))
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        calls: list[tuple[str, dict[str, object]]] = [
            ("doc_ingest", {"text": "# Head\n\nWidgets galore.", "title": f"T{NASTY}", "doc_id": "a"}),
            ("doc_ingest", {"text": f"# Head{NASTY}\n\nGadgets by heading.", "doc_id": "b"}),
            ("doc_ingest", {"file_path": str(named), "doc_id": "c"}),
            ("doc_list", {}),
            ("doc_search", {"query": "widgets"}),
            # b's heading is its text too, which its outline, window and chunk show as written (a tool reads a
            # document verbatim): only its title is asked of here.
            *[(tool, dict[str, object](doc_id=doc)) for doc in "ac" for tool in ("doc_outline", "doc_window")],
            ("context_open", {"session_id": "s", "title": f"S{NASTY}"}),
            ("context_status", {"session_id": "s"}),
            ("context_list_sessions", {}),
        ]
        shown: dict[str, str] = {}
        for tool, args in calls:
            result = await client.call_tool(tool, args)
            assert not result.is_error, result
            shown[f"{tool} {args}"] = "".join(c.text for c in result.content if isinstance(c, TextContent))
        for resource in (await client.list_resources()).resources:
            shown[f"listed {resource.uri}"] = f"{resource.title} {resource.description}"
            if resource.uri.endswith("/b"):
                continue
            read = await client.read_resource(resource.uri)
            shown[f"read {resource.uri}"] = "".join(
                c.text for c in read.contents if isinstance(c, TextResourceContents)
            )
        asked: tuple[tuple[str, dict[str, str]], ...] = (
            ("answer_from_document", {"doc_id": "c", "question": "How many?"}),
            ("resume_session", {"session_id": "s"}),
        )
        for prompt, prompt_args in asked:
            got = await client.get_prompt(prompt, prompt_args)
            shown[f"prompt {prompt}"] = " ".join(map(_text, (message.content for message in got.messages)))
    assert {where: _obeyed(text) for where, text in shown.items() if _obeyed(text)} == {}
    assert '"T\\x1b[2J\\x1b]0;owned\\x07\\x9b2J\\x7f\\u202eevil\\u2066x\\u2069"' in shown["doc_list {}"]
    # A newline in a file's name would start a line of its own in doc_list: the title is one line.
    assert (
        'c "name\\x1b[2J\\x1b]0;owned\\x07\\x9b2J\\x7f\\u202eevil\\u2066x\\u2069 second line.md"'
        in shown["doc_list {}"]
    )
    assert 'b "Head\\x1b[2J' in shown["doc_list {}"]
    assert "\\u202e" in shown["read ctxtrio://docs/c"].split("\n", 1)[0]  # the source line names the file's path


async def test_a_title_is_cut_between_characters_never_inside_an_escape(tmp_path: Path) -> None:
    """A title is cut to 200 characters (a first heading to 80) after its controls became escapes, and the
    cut could end inside one ('...aa\\x1'), which reads as other text; now it ends before the escape."""
    config = ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        for args in (
            {"text": "Widgets.", "title": "a" * 198 + NASTY, "doc_id": "given"},
            {"text": "# " + "h" * 78 + NASTY + "\n\nGadgets.", "doc_id": "heading"},
        ):
            result = await client.call_tool("doc_ingest", args)
            assert not result.is_error, result
        listed = _text((await client.call_tool("doc_list", {})).content[0])
    assert f'given "{"a" * 198}"' in listed, listed
    assert f'heading "{"h" * 78}"' in listed, listed
    assert "\\x1" not in listed and not _obeyed(listed), listed
