"""The catalog stays bounded however often doc_window moves a cursor (issue 27, finding 10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio._errors import StoreError
from ctxtrio.docs import catalog
from ctxtrio.store.reading import read_journal

from .conftest import opened

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from ctxtrio.store.results import Rewrite, RewriteResult

TEXT = "\n\n".join(f"# Part {n}\n\nParagraph {n} says something about topic {n}." for n in range(40))


async def test_cursor_records_are_compacted_and_other_contexts_follow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """200 windows in 4 sessions leave at most slack + live cursor records; a second context reads on from its cursor."""
    monkeypatch.setattr(catalog, "CURSOR_SLACK", 10)
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as one, opened(tmp_path) as two:
        doc = (await one.documents.ingest(text=TEXT, title="parts", doc_id="d")).doc
        assert doc.chunks > 4
        for number in range(4):
            await one.sessions.open(f"s{number}")
        for step in range(200):
            await one.documents.window("d", start=step % doc.chunks, end=step % doc.chunks, session_id=f"s{step % 4}")
        catalog_path = one.data.docs / "catalog.jsonl"
        cursors = [r for r in read_journal(catalog_path).records if r.data["kind"] == "cursor"]
        assert len(cursors) <= 4 + 10 + 1
        last = 199 - 3  # session s0's last window started at chunk (196 % chunks)
        expected = last % doc.chunks + 1
        assert (await two.documents.window("d", session_id="s0", end=expected)).chunks[0].index == expected
        await two.documents.window("d", session_id="s1", start=0, end=0)  # an append after the rewrite
        assert (await one.documents.window("d", session_id="s1", end=1)).chunks[0].index == 1


async def test_a_catalog_rewrite_that_fails_leaves_the_window_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cursor record is durable before the catalog's stale cursors are dropped; a rewrite that
    fails then (a full disk: "No space left on device") is logged and tried again by the next cursor,
    and the window is answered. Before, doc_window failed after the cursor had moved past the
    window, so the model's next call skipped it."""
    monkeypatch.setattr(catalog, "CURSOR_SLACK", 2)
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = (await ctx.documents.ingest(text=TEXT, title="parts", doc_id="d")).doc
        await ctx.sessions.open("s")
        for _ in range(3):
            await ctx.documents.window("d", start=0, end=0, session_id="s")
        rewrite = ctx.store.rewrite

        async def full_disk(path: Path, transform: Rewrite) -> RewriteResult:
            raise StoreError(f"cannot rewrite journal {path}: No space left on device")

        monkeypatch.setattr(ctx.store, "rewrite", full_disk)
        shown = [(await ctx.documents.window("d", session_id="s", end=n)).chunks[0].index for n in (1, 2)]
        assert shown == [1, 2] and doc.chunks > 3
        monkeypatch.setattr(ctx.store, "rewrite", rewrite)
        assert (await ctx.documents.window("d", session_id="s", end=3)).chunks[0].index == 3
        cursors = [r for r in read_journal(ctx.data.docs / "catalog.jsonl").records if r.data["kind"] == "cursor"]
        assert len(cursors) <= 1 + 2 + 1
