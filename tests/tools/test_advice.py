"""Library errors gain advice about the tools only at the tool boundary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp import Client
from mcp.types import TextContent

from ctxtrio._app import build_server
from ctxtrio._config import Config
from ctxtrio._errors import InputError, NotFoundError
from ctxtrio._wiring import open_wiring
from ctxtrio.tools.advice import advised

if TYPE_CHECKING:
    from pathlib import Path


def test_hints_become_tool_advice() -> None:
    """Each hint names the tool that helps; an error without a hint is shown as it is."""
    assert advised(NotFoundError("no document 'x'", hint="list_documents"), "doc_window") == (
        "no document 'x'; doc_list shows the documents"
    )
    assert advised(InputError("changed meanwhile", hint="retry"), "context_compact") == (
        "changed meanwhile; call context_compact again"
    )
    assert advised(InputError("query is empty"), "doc_search") == "query is empty"
    compact = {"context_guide", "memory", "context_compact", "doc_ingest", "doc_read"}  # --tools compact
    assert advised(NotFoundError("no session 's'", hint="list_sessions"), "memory", compact) == (
        "no session 's'; memory with a note creates the session"
    )
    assert advised(NotFoundError("no document 'x'", hint="list_documents"), "doc_read", {"doc_read"}) == (
        "no document 'x'; doc_read with a query and no doc_id searches every document"
    )
    assert advised(NotFoundError("no document 'x'", hint="list_documents"), "t", {"t"}) == "no document 'x'"


async def test_the_model_reads_the_advice(tmp_path: Path) -> None:
    """Through the SDK client an unknown document names doc_list, an oversized entry doc_ingest."""
    config = Config(data_dir=tmp_path, llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        missing = await client.call_tool("doc_outline", {"doc_id": "nope"})
        huge = await client.call_tool("context_append", {"session_id": "s", "text": "x" * 100_000})
    texts = []
    for result in (missing, huge):
        block = result.content[0]
        assert result.is_error and isinstance(block, TextContent)
        texts.append(block.text)
    assert texts[0] == "Error: no document 'nope'; doc_list shows the documents"
    assert texts[1].endswith("; doc_ingest stores a document")
