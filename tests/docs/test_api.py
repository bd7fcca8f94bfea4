"""The public surface of ctxtrio.docs, pinned for mypy with assert_type (and run once)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, assert_type

import ctxtrio
import ctxtrio.docs as docs
from testkit.deadlines import until

if TYPE_CHECKING:
    from pathlib import Path


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted, every name resolves, and every result type is a frozen slotted dataclass."""
    assert docs.__all__ == sorted(docs.__all__)
    for name in docs.__all__:
        value: object = getattr(docs, name)
        if name != "DocumentService":
            assert isinstance(value, type) and dataclasses.is_dataclass(value)
            assert getattr(value, "__dataclass_params__").frozen and "__slots__" in vars(value)


async def test_public_signatures(tmp_path: Path) -> None:
    """Every DocumentService method returns its frozen result type."""
    config = ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with ctxtrio.open_context(config) as ctx:
        service = ctx.documents
        assert_type(service, docs.DocumentService)
        ingested = await service.ingest(text="# T\n\nSome words about zebras.", doc_id="d", title="T")
        assert_type(ingested, docs.IngestResult)
        assert_type(ingested.doc, docs.DocumentInfo)
        assert_type(await service.list_documents(), list[docs.DocumentInfo])
        assert_type(await service.get("d"), docs.DocumentInfo)
        outline = await service.outline("d", summarize=True, start=0, max_chunks=10, wait=until(1e9))
        assert_type(outline, docs.Outline)
        assert_type(outline.entries, tuple[docs.OutlineEntry, ...])
        found = await service.search("zebras", doc_id="d", budget_tokens=500, limit=5)
        assert_type(found, docs.SearchResult)
        assert_type(found.hits, tuple[docs.SearchHit, ...])
        await ctx.sessions.open("s")  # a cursor belongs to a session
        window = await service.window("d", start=0, end=0, budget_tokens=500, reset=False, session_id="s")
        assert_type(window, docs.Window)
        assert_type(window.chunks, tuple[docs.WindowChunk, ...])
        summary = await service.summarize("d", start=0, end=0, target_tokens=100, refresh=False, wait=until(1e9))
        assert_type(summary, docs.DocSummary)
        assert_type(await service.forget("d"), docs.DocumentInfo)
        assert found.hits[0].doc_id == "d" and window.at_end and summary.method == "verbatim"
