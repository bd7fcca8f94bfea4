"""The doc tools in the real server, a stdio subprocess driven by the SDK client."""

from __future__ import annotations

from pathlib import Path

import trio
from mcp import Client
from mcp.types import TextContent

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
