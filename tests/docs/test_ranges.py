"""A few chunks of a large document are read from their lines alone, and match what loading it gives."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ctxtrio
from ctxtrio.docs.ranges import RANGE_MIN_BYTES, chunk_spans
from ctxtrio.docs.render import render_outline, render_window

if TYPE_CHECKING:
    from pathlib import Path


def _text() -> str:
    parts = [
        f"## Part {i}\n\n" + f"Entry {i}: the service answered in {i % 97} ms and nothing failed. " * 25
        for i in range(3000)
    ]
    return "\n\n".join(parts)


async def test_cold_reads_use_the_lines_and_match_a_loaded_document(tmp_path: Path) -> None:
    """After a restart, chunks and an outline of a >4 MB document come without loading it, equal to the loaded answers."""
    text = _text()
    config = ctxtrio.Config(data_dir=tmp_path, llm_enabled=False, audit=False, max_ingest_chars=len(text) + 1)
    async with ctxtrio.open_context(config) as ctx:
        info = (await ctx.documents.ingest(text=text, doc_id="big")).doc
    async with ctxtrio.open_context(config) as ctx:
        repo = ctx.documents._repo
        await ctx.documents.get("big")  # the catalog is read; the document is not
        assert repo.gen_path("big", repo.entry("big").gen).stat().st_size >= RANGE_MIN_BYTES
        cold_middle = render_window(await ctx.documents.read("big", info.chunks // 2, info.chunks // 2 + 3))
        cold_end = render_window(await ctx.documents.read("big", info.chunks - 2, 10**6))
        cold_outline = render_outline(await ctx.documents.outline("big", start=info.chunks - 50))
        assert not repo._loaded  # nothing was loaded for those
        await repo.load("big")
        assert repo._loaded
        assert render_window(await ctx.documents.read("big", info.chunks // 2, info.chunks // 2 + 3)) == cold_middle
        assert render_window(await ctx.documents.read("big", info.chunks - 2, 10**6)) == cold_end
        assert render_outline(await ctx.documents.outline("big", start=info.chunks - 50)) == cold_outline
    assert f"#{info.chunks - 1}" in cold_end and "End of document" in cold_end


def test_spans_of_a_file_without_chunk_lines_are_empty(tmp_path: Path) -> None:
    """Lines that are not chunk records give no spans (the caller then loads the document)."""
    path = tmp_path / "gen.jsonl"
    path.write_bytes(b'{"v":1,"kind":"summary","key":"k","text":"x"}\n' * 100_000)
    assert chunk_spans(path, 5, 3) == []
