"""Re-ingesting a file without a doc_id: the same resolved path is the same document."""

from __future__ import annotations

import hashlib
from functools import partial
from typing import TYPE_CHECKING

import trio

from ctxtrio.docs.ingest import text_digest

from .conftest import fixture_text, opened

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._wiring import Wiring


async def test_unchanged_file_is_skipped(tmp_path: Path, root: Path) -> None:
    """The same file ingested twice without doc_id writes nothing the second time."""
    async with opened(tmp_path, root) as ctx:
        first = await ctx.documents.ingest(file_path="manual.md")
        again = await ctx.documents.ingest(file_path=str(root / "." / "manual.md"))
        assert again.unchanged and not again.replaced
        assert again.doc == first.doc
        assert [info.doc_id for info in await ctx.documents.list_documents()] == [first.doc.doc_id]


async def test_changed_file_replaces_its_document(tmp_path: Path, root: Path) -> None:
    """A changed file ingested again without doc_id replaces its earlier document."""
    async with opened(tmp_path, root) as ctx:
        first = await ctx.documents.ingest(file_path="manual.md")
        (root / "manual.md").write_text("# Changed\n\nCompletely new content about zebras.\n", encoding="utf-8")
        again = await ctx.documents.ingest(file_path="manual.md")
        assert again.replaced and not again.unchanged
        assert again.doc.doc_id == first.doc.doc_id and again.doc.chunks == 1
        assert [info.doc_id for info in await ctx.documents.list_documents()] == [first.doc.doc_id]
        found = await ctx.documents.search("zebras")
        assert [hit.doc_id for hit in found.hits] == [first.doc.doc_id]


async def test_new_title_replaces_instead_of_skipping(tmp_path: Path, root: Path) -> None:
    """Unchanged content under a new title is ingested again, into the same document."""
    async with opened(tmp_path, root) as ctx:
        first = await ctx.documents.ingest(file_path="manual.md")
        again = await ctx.documents.ingest(file_path="manual.md", title="Operator manual")
        assert again.replaced and again.doc.doc_id == first.doc.doc_id and again.doc.title == "Operator manual"


async def test_inline_text_and_explicit_ids_are_not_deduplicated(tmp_path: Path, root: Path) -> None:
    """Inline text is a new document each time; an explicit doc_id always re-ingests."""
    async with opened(tmp_path, root) as ctx:
        one = await ctx.documents.ingest(text="same words")
        two = await ctx.documents.ingest(text="same words")
        assert one.doc.doc_id != two.doc.doc_id
        await ctx.documents.ingest(file_path="manual.md", doc_id="m")
        again = await ctx.documents.ingest(file_path="manual.md", doc_id="m")
        assert again.replaced and not again.unchanged


async def test_content_hash_is_kept_in_the_catalog(tmp_path: Path, root: Path) -> None:
    """The stored document carries the SHA-256 of its text, also after a restart."""
    expected = hashlib.sha256(fixture_text("manual.md").encode()).hexdigest()
    async with opened(tmp_path, root) as ctx:
        result = await ctx.documents.ingest(file_path="manual.md")
        assert result.doc.content_hash == expected
    async with opened(tmp_path, root) as ctx:
        assert (await ctx.documents.get(result.doc.doc_id)).content_hash == expected


async def test_unchanged_file_asks_the_rule_ingest_uses(tmp_path: Path, root: Path) -> None:
    """unchanged_file names the document ingest would skip, and None once the text or the name differs."""
    source = str((root / "manual.md").resolve())
    digest = text_digest(fixture_text("manual.md"))
    async with opened(tmp_path, root) as ctx:
        assert await ctx.documents.unchanged_file("manual.md", source, digest) is None  # not ingested yet
        first = await ctx.documents.ingest(file_path="manual.md")
        assert await ctx.documents.unchanged_file("manual.md", source, digest) == first.doc
        assert await ctx.documents.unchanged_file("manual.md", source, text_digest("other words")) is None
        assert await ctx.documents.unchanged_file("renamed.md", source, digest) is None  # another title


async def test_concurrent_ingests_of_one_file_store_it_once(tmp_path: Path, root: Path) -> None:
    """Three tasks ingesting the same file at once store one document; the others find it unchanged (issue 27, 10)."""
    results = []

    async def ingest(ctx: Wiring) -> None:
        results.append(await ctx.documents.ingest(file_path="manual.md"))

    async with opened(tmp_path, root) as ctx:
        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(ingest, ctx)
        listed = await ctx.documents.list_documents()
    assert len(listed) == 1
    assert sorted(result.unchanged for result in results) == [False, True, True]
    assert {result.doc.doc_id for result in results} == {listed[0].doc_id}


async def test_contexts_sharing_a_data_dir_ingest_one_file_once(tmp_path: Path, root: Path) -> None:
    """Two contexts on one data dir (as two processes are) ingesting the same file at once: one document."""
    async with opened(tmp_path, root) as one, opened(tmp_path, root) as two:
        async with trio.open_nursery() as nursery:
            for ctx in (one, two, one, two):
                nursery.start_soon(partial(ctx.documents.ingest, file_path="manual.md"))
        assert len(await one.documents.list_documents()) == 1
        assert len(await two.documents.list_documents()) == 1
