"""A word most chunks hold is left out of a search's last level (``store.rows.fts_levels``'s ``common``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .conftest import opened

if TYPE_CHECKING:
    from pathlib import Path


async def test_rows_holding_only_a_word_most_chunks_hold_are_not_hits(tmp_path: Path) -> None:
    """Of 30 documents all saying "widget", two say "frobnicate": a search for both finds those two, not
    28 documents that hold only the word every document holds (it adds nothing to their BM25)."""
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        for n in range(30):
            extra = " The frobnicate step runs first." if n in (3, 17) else ""
            await docs.ingest(text=f"# Part {n}\n\nThe widget number {n} turns.{extra}", doc_id=f"d{n}")
        found = await docs.search("widget frobnicate", limit=10)
        assert sorted(hit.doc_id for hit in found.hits) == ["d17", "d3"] and found.omitted == 0
        alone = await docs.search("widget frobnicatr", limit=5)  # misspelt: the common word still finds
        assert len(alone.hits) >= 1
