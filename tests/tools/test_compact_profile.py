"""--tools compact: five combined tools under 3,000 characters, served by the real stdio server."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio
from mcp import Client
from mcp.types import TextContent

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
