"""The doc tools in the real server, a stdio subprocess driven by the SDK client."""

from __future__ import annotations

from pathlib import Path

import trio
from mcp import Client
from mcp.types import TextContent

from testkit.results import text_of
from testkit.servers import server_params

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "text" / "fixtures"


async def test_file_ingest_search_and_window_over_stdio(tmp_path: Path) -> None:
    """A file under --ingest-root is ingested, found by a Korean query and read with from/to over stdio."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_bytes((FIXTURES / "korean.txt").read_bytes())
    (root / "manual.md").write_bytes((FIXTURES / "manual.md").read_bytes())
    params = server_params(tmp_path / "data", "--ingest-root", str(root))
    with trio.fail_after(60):
        async with Client(params) as client:
            for name, doc_id in (("notes.txt", "ko"), ("manual.md", "man")):
                ingested = await client.call_tool("doc_ingest", {"file_path": name, "doc_id": doc_id})
                assert not ingested.is_error
            found = await client.call_tool("doc_search", {"query": "데이터베이스", "limit": 2})
            assert found.structured_content is not None
            assert found.structured_content["hits"][0]["doc_id"] == "ko"
            window = await client.call_tool(
                "doc_window", {"doc_id": "man", "from": 3, "to": 4, "budget_tokens": 100000}
            )
            assert window.structured_content == {"doc_id": "man", "chunks": [3, 4], "next": 5, "at_end": False}
            block = window.content[0]
            assert isinstance(block, TextContent) and block.text.startswith('man "manual.md" chunks #3-4 of ')
            outside = await client.call_tool("doc_ingest", {"file_path": "/etc/passwd"})
            assert outside.is_error


async def test_a_refusal_names_a_path_with_its_controls_escaped(tmp_path: Path) -> None:
    """A refusal naming a file's resolved path (a symlink's target holding ESC, C1 CSI and U+202E, and a file in
    it named so) shows those characters as escapes: the paths are the file system's, not the caller's."""
    root = tmp_path / "root"
    root.mkdir()
    target = root / "dir\x1b[2J\x9b2J\u202eevil"
    target.mkdir()
    (target / "page\x1b]0;owned\x07.md").write_text("text\n")
    (root / "link.md").symlink_to(target)
    with trio.fail_after(60):
        async with Client(server_params(tmp_path / "data", "--ingest-root", str(root))) as client:
            refused = await client.call_tool("doc_ingest", {"file_path": "link.md"})
    said = text_of(refused)
    assert refused.is_error and "/dir\\x1b[2J\\x9b2J\\u202eevil is a directory, not a file" in said, said
    assert "/page\\x1b]0;owned\\x07.md" in said, said  # the file it advises passing instead
    assert not any(control in said for control in "\x1b\x07\x9b\u202e")
