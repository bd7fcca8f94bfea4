"""The entry the query names, cut by its chunk's end: the next chunk, which holds the rest of it,
comes right after it (docs/continuation.py), and its passage is not taken for a repeat of the
boilerplate it shares with the entry above (docs/packing.pack_hits)."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.continuation import cut_definition, with_continuation
from ctxtrio.docs.packing import Candidate, pack_hits
from ctxtrio.docs.service import repository_of
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel

from .conftest import opened

#: Node 18's fs.md from the middle of fs.rmdir's options to fs.stat's heading (fixtures/NOTICE.txt).
FIXTURES = Path(__file__).parent / "fixtures"
FS = "node_fs_rmdir_rm.md"
MODEL = TokenModel.cold()
ANSWER = "If `true`, perform a recursive removal"
#: Where the chunker ends the first chunk of the excerpt, as it ends fs.md's chunk #106 over the
#: whole page: right after fs.rm's heading and first two options, before its `recursive`.
FIRST_END = 1563


def _fs_chunks() -> tuple[StoredChunk, StoredChunk]:
    text = (FIXTURES / FS).read_text(encoding="utf-8")
    head, tail = text[:FIRST_END], text[FIRST_END:]
    assert tail.startswith("  * `recursive` {boolean} If `true`, perform a recursive removal.")
    rmdir = ("File system", "Callback API", "`fs.rmdir(path[, options], callback)`")
    rm = ("File system", "Callback API", "`fs.rm(path[, options], callback)`")
    return (
        StoredChunk(106, head, 0, FIRST_END, rmdir, MODEL.estimate(head)),
        StoredChunk(107, tail, FIRST_END, len(text), rm, MODEL.estimate(tail)),
    )


def test_a_passage_whose_lines_with_the_query_words_are_new_is_no_repeat() -> None:
    """fs.rm's options after fs.rmdir's: retryDelay, callback and err are word for word the same
    lines (5 of the 8 the passage shows), its `recursive` lines are not. The passage is shown, with
    the answer, and the third hit still fits; every budget holds."""
    rmdir, rm = _fs_chunks()
    other = (FIXTURES / "node_buffer.md").read_text(encoding="utf-8")[:3000]
    buffer = StoredChunk(0, other, 0, len(other), ("Buffer",), MODEL.estimate(other))
    candidates = [Candidate("fs", "fs.md", rmdir, 2.0), Candidate("fs", "fs.md", rm, 1.0)]
    candidates.append(Candidate("buffer", "buffer.md", buffer, 0.5))
    for budget in (750, 850, 1000):
        hits, omitted, used = pack_hits(candidates, budget, MODEL, query_terms("fs.rm recursive"))
        assert [hit.index for hit in hits] == [106, 107, 0] and omitted == 0 and used <= budget, budget
        assert hits[1].cut and ANSWER in hits[1].text, budget


async def test_the_chunk_after_a_cut_definition_of_the_asked_name_comes_second(tmp_path: Path) -> None:
    """The excerpt ingested is chunked as fs.md is: the first chunk ends inside fs.rm's entry, which
    it defines last. For 'fs.rm recursive' the next chunk is read and put second; for fs.rmdir,
    whose entry the chunk does not start, nothing changes."""
    async with opened(tmp_path, FIXTURES) as ctx:
        await ctx.documents.ingest(file_path=str(FIXTURES / FS), doc_id="fs")
        repo = repository_of(ctx.documents)
        _, doc = await repo.load("fs")
        first, second = doc.chunks[0], doc.chunks[1]
        assert first.end == FIRST_END and ANSWER in second.text and ANSWER not in first.text
        hit = Candidate("fs", "fs.md", first, 2.0)
        for query, continued in (("fs.rm recursive", True), ("fs.rmdir recursive", False)):
            terms = query_terms(query)
            assert cut_definition(hit, terms, query) is continued, query
            kept = await with_continuation(repo, [hit], terms, query, 10, repo.current_journals())
            assert [c.chunk.index for c in kept] == ([0, 1] if continued else [0]), query
        searched = repo.current_journals()
        assert [
            c.chunk.index for c in await with_continuation(repo, [hit], query_terms("fs.rm"), "fs.rm", 1, searched)
        ] == [0]


async def test_no_chunk_after_comes_from_a_newer_version(tmp_path: Path) -> None:
    """The document is ingested again between the search and the read of the chunk after: that
    chunk would continue another text, so the first hit stays alone."""
    async with opened(tmp_path, FIXTURES) as ctx:
        await ctx.documents.ingest(file_path=str(FIXTURES / FS), doc_id="fs")
        repo = repository_of(ctx.documents)
        _, doc = await repo.load("fs")
        searched = dict(repo.current_journals())
        hit = Candidate("fs", "fs.md", doc.chunks[0], 2.0)
        terms = query_terms("fs.rm recursive")
        text = (FIXTURES / FS).read_text(encoding="utf-8")
        await ctx.documents.ingest(text=text.replace("recursive removal", "removal, recursively"), doc_id="fs")
        kept = await with_continuation(repo, [hit], terms, "fs.rm recursive", 10, searched)
        assert [c.chunk.index for c in kept] == [0]
        now = await with_continuation(repo, [hit], terms, "fs.rm recursive", 10, repo.current_journals())
        assert [c.chunk.index for c in now] == [0, 1] and "removal, recursively" in now[1].chunk.text
