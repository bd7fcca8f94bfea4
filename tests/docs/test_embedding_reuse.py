"""Semantic recall sends a text the vectors file holds no second time: an edited document's unchanged
chunks, every chunk after a new rows layout, and the chunks of a file written by schema 3
(vector_schema.py); a document forgotten takes its vectors with it."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import pytest
import trio

from ctxtrio.store import vector_schema, vectors
from testkit.fake_embeddings import FakeEmbeddings

from .conftest import opened
from .embedder import BISECT, OTHER, QUERY, SYNONYMS, caught_up, paragraphs, semantic

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio.docs.embedding import SemanticIndex


#: The embedder retries and polls quickly (conftest's fixture: real time here).
pytestmark = pytest.mark.usefixtures("quick_retries")


async def settled(index: SemanticIndex) -> None:
    """Until a pass that began after now found every chunk embedded (a status of before may say so too)."""
    mark = index.passes
    with trio.fail_after(30):
        while not (
            index.passes >= mark + 2
            and index.status().state == "caught up"
            and index.status().chunks_embedded == index.status().chunks_total
        ):
            index.wake()
            await trio.sleep(0.05)


async def test_an_edited_document_sends_only_its_changed_chunks_texts(tmp_path: Path) -> None:
    """One section edited and the document ingested again (replaced: a new generation): only the
    texts holding the edit are sent; every other chunk's vector is the one already stored."""
    fake = FakeEmbeddings()
    text = paragraphs(30)
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        first = await ctx.documents.ingest(text=text, title="parts", doc_id="parts")
        async with semantic(ctx, fake) as index:
            await caught_up(index)
            sent, vectors = len(fake.embedded), index.status().vectors
            edited = text.replace("Section 17 explains topic17", "Section 17 explains topic17 anew")
            again = await ctx.documents.ingest(text=edited, title="parts", doc_id="parts")
            await settled(index)
            assert index.status().vectors == vectors
    assert again.doc.chunks == first.doc.chunks > 20 and sent == len(set(fake.embedded[:sent]))
    resent = fake.embedded[sent:]
    assert resent and all("anew" in one for one in resent), resent


def stored_texts(tmp_path: Path) -> int:
    """How many vectors the documents' vectors file holds (named by a row or not)."""
    with sqlite3.connect(next(tmp_path.rglob("vectors.sqlite3"))) as conn:
        return int(conn.execute("SELECT count(*) FROM texts").fetchone()[0])


async def test_a_forgotten_documents_vectors_go_with_it(tmp_path: Path) -> None:
    """Forget is for good: the vectors of the texts only its chunks held are deleted with its rows (a copy
    of the same page under another doc_id keeps the vectors they share); ingested again, it is embedded
    again and matches by meaning again."""
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    async with opened(tmp_path, query_expansion=False) as ctx:
        await ctx.documents.ingest(text=OTHER, title="shutil")
        bisect = await ctx.documents.ingest(text=BISECT, title="bisect")
        async with semantic(ctx, fake) as index:
            await caught_up(index)
            sent, held = len(fake.embedded), stored_texts(tmp_path)
            await ctx.documents.forget(bisect.doc.doc_id)
            await settled(index)
            assert index.status().chunks_total == 1
            assert stored_texts(tmp_path) < held  # gone at once, not kept as spares for an ingest again
            assert all(text not in BISECT for text in fake.embedded[sent:])
            back = await ctx.documents.ingest(text=BISECT, title="bisect")
            await settled(index)
            again = fake.embedded[sent:]
            assert again and all(any(part in text for part in BISECT.split("\n") if part) for text in again)
            assert stored_texts(tmp_path) == held
            result = await ctx.documents.search(QUERY, limit=1)
            # The same page kept under two ids: forgetting one keeps the vectors the other still names.
            twin = await ctx.documents.ingest(text=BISECT, title="bisect twin", doc_id="twin")
            await settled(index)
            asked = len(fake.embedded)
            await ctx.documents.forget(back.doc.doc_id)
            await settled(index)
            assert stored_texts(tmp_path) == held and len(fake.embedded) == asked
            twin_result = await ctx.documents.search(QUERY, limit=1)
    assert [(hit.doc_id, hit.by_meaning) for hit in result.hits] == [(back.doc.doc_id, True)]
    assert [(hit.doc_id, hit.by_meaning) for hit in twin_result.hits] == [(twin.doc.doc_id, True)]


async def test_a_new_rows_layout_sends_nothing_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a bump of ROWS_VERSION the rows are made again from the journals, every text found by its digest."""
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=paragraphs(12), title="parts")
        async with semantic(ctx, FakeEmbeddings()) as index:
            await caught_up(index)
            before = index.status()
        monkeypatch.setattr(vector_schema, "ROWS_VERSION", vector_schema.ROWS_VERSION + 1)
        second = FakeEmbeddings()
        async with semantic(ctx, second) as index:
            await caught_up(index)
            after = index.status()
    assert second.embedded == []
    assert (after.chunks_embedded, after.vectors) == (before.chunks_embedded, before.vectors)


def as_schema_3(path: Path) -> None:
    """The vectors file as schema 3 kept it: one table, each row with its vector."""
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE vectors AS SELECT r.model, r.dim, r.journal, r.item, r.part, r.line_start, r.line_end, "
        "r.span_start, r.span_end, coalesce(t.vec, x'') AS vec FROM rows AS r LEFT JOIN texts AS t "
        "ON t.model = r.model AND t.dim = r.dim AND t.digest = r.digest;"
        "DROP TABLE rows; DROP TABLE texts; DROP TABLE meta; PRAGMA user_version = 3;"
    )
    conn.close()


async def test_a_schema_3_file_is_migrated_without_requests(tmp_path: Path) -> None:
    """A file of the layout before texts were kept apart: every part of this tree's chunks holds the
    characters its old row holds, so each takes its old vector and nothing is sent; the old table goes."""
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=paragraphs(12), title="parts")
        await ctx.documents.ingest(text=BISECT, title="bisect")
        async with semantic(ctx, FakeEmbeddings()) as index:
            await caught_up(index)
            before = index.status()
        as_schema_3(ctx.data.vectors_path)
        second = FakeEmbeddings()
        async with semantic(ctx, second) as index:
            await caught_up(index)
            after = index.status()
        conn = sqlite3.connect(ctx.data.vectors_path)
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        conn.close()
    assert second.embedded == []
    assert (after.chunks_embedded, after.vectors) == (before.chunks_embedded, before.vectors)
    assert tables == {"meta", "texts", "rows"}


async def test_texts_of_replaced_chunks_are_bounded_once_caught_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no room for spare texts, an edited document still costs only its changed texts (they are
    kept until every chunk is embedded), and then the file holds exactly the texts its rows name."""
    monkeypatch.setattr(vectors, "SPARE_MIN", 0)
    monkeypatch.setattr(vectors, "SPARE_SHARE", 10**9)
    fake = FakeEmbeddings()
    text = paragraphs(12)
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=text, title="parts", doc_id="parts")
        async with semantic(ctx, fake) as index:
            await caught_up(index)
            sent = len(fake.embedded)
            await ctx.documents.ingest(text=text.replace("topic5 ", "topic5 anew "), title="parts", doc_id="parts")
            await settled(index)
        conn = sqlite3.connect(ctx.data.vectors_path)
        texts = conn.execute("SELECT count(*) FROM texts").fetchone()[0]
        named = conn.execute("SELECT count(DISTINCT digest) FROM rows WHERE digest IS NOT NULL").fetchone()[0]
        conn.close()
    resent = fake.embedded[sent:]
    assert resent and all("anew" in one for one in resent)
    assert texts == named == sent
