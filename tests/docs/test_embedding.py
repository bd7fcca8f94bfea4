"""Semantic recall: background embedding, fusion with BM25, and what happens when the endpoint is down."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
import trio

from ctxtrio._app import open_context
from ctxtrio.docs.embedding import PART_CHARS, chunk_parts
from ctxtrio.docs.hybrid import fuse
from ctxtrio.docs.packing import (
    FIRST_FOCUS_CHARS,
    FIRST_FOCUS_MARGIN,
    FOCUS_LEAST,
    FOCUS_MARGIN,
    Candidate,
    pack_hits,
    tokens_per_char,
)
from ctxtrio.docs.render import render_search
from ctxtrio.docs.search import rerank_fused
from ctxtrio.store import vector_task
from ctxtrio.store.rows import Hit
from ctxtrio.store.vectors import VectorHit, VectorStore
from ctxtrio.text.chunking import Chunk, chunk_document
from ctxtrio.text.kinds import Kind
from ctxtrio.text.leads import entry_leads
from ctxtrio.text.tokens import TokenModel
from ctxtrio.tools.guide import guide_text
from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings, served_config, whole_batches

from .conftest import PY_SOURCES, normal, opened
from .embedder import BASE, BISECT, OTHER, QUERY, SYNONYMS, caught_up, paragraphs, semantic

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


#: The embedder retries and polls quickly (the fixture: real time here).
pytestmark = pytest.mark.usefixtures("quick_retries")


async def test_a_paraphrase_is_found_by_meaning_and_says_so(tmp_path: Path) -> None:
    """A query sharing no word with the passage finds it only with embeddings, marked as found by meaning."""
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    # Word neighbours (text/neighbours.py) would find it by its words' neighbours: meaning alone here.
    async with opened(tmp_path, query_expansion=False) as ctx:
        await ctx.documents.ingest(text=OTHER, title="shutil")
        bisect = await ctx.documents.ingest(text=BISECT, title="bisect")
        assert (await ctx.documents.search(QUERY)).hits == ()
        async with semantic(ctx, fake) as index:
            await caught_up(index)
            result = await ctx.documents.search(QUERY, limit=1)
            said = guide_text(ctx)
    assert [(hit.doc_id, hit.by_meaning) for hit in result.hits] == [(bisect.doc.doc_id, True)]
    assert f"semantic recall: fake-embed at {BASE}, 64 dimensions; 2 of 2 chunks embedded; caught up" in said
    assert result.semantic_skipped is None
    assert "found by meaning, not by its words" in render_search(result)


async def test_keyword_hits_stay_and_are_not_marked(tmp_path: Path) -> None:
    """A query whose words match ranks that chunk first, not marked as found by meaning."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=OTHER, title="shutil")
        await ctx.documents.ingest(text=BISECT, title="bisect")
        async with semantic(ctx, FakeEmbeddings(synonyms=SYNONYMS)) as index:
            await caught_up(index)
            result = await ctx.documents.search("directory trees")
    assert result.hits[0].title == "shutil" and not result.hits[0].by_meaning


async def test_ingest_never_waits_and_search_falls_back(tmp_path: Path) -> None:
    """With a hung endpoint, ingest is acknowledged though nothing is embedded, and search answers from BM25, saying so."""
    fake = FakeEmbeddings()
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=BISECT, title="bisect")
        async with semantic(ctx, fake) as index:
            await caught_up(index)
            fake.delay_s = 10_000  # hung from now on
            shutil = await ctx.documents.ingest(text=OTHER, title="shutil")
            result = await ctx.documents.search("sorted values")
            assert index.status().chunks_embedded == 1 and len(fake.requests) == 1  # the new one not answered
    assert shutil.doc.chunks == 1
    assert result.hits and result.hits[0].title == "bisect"
    assert result.semantic_skipped is not None and "did not answer within 0.5 s" in result.semantic_skipped
    assert "Keyword search only" in render_search(result)


async def test_endpoint_killed_mid_backfill_resumes_without_repeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after 3 batches: BM25 answers meanwhile; restarted: the backfill finishes and no text is embedded twice."""
    whole_batches(monkeypatch)  # (3 requests are 3 batches, not as many as the machine's pace cut them into)
    fake = FakeEmbeddings(down_after=3)
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=paragraphs(120), title="parts")
        assert doc.doc.chunks > 3 * 16
        async with semantic(ctx, fake) as index:
            with trio.fail_after(30):
                while index.status().state != "endpoint unreachable":
                    await trio.sleep(0.05)
            status = index.status()
            assert status.state == "endpoint unreachable" and 0 < status.chunks_embedded < doc.doc.chunks
            result = await ctx.documents.search("topic77 example77")
            assert result.hits[0].index == 77 or "topic77" in result.hits[0].text
            assert result.semantic_skipped is not None
            fake.down = False
            await caught_up(index)
    # Each chunk is two parts: its passage and its title's lead.
    assert len(fake.embedded) == len(set(fake.embedded)) == 2 * doc.doc.chunks


async def test_restart_resumes_from_the_vectors_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped mid-backfill and started again, the embedder asks only for what was not stored yet."""
    whole_batches(monkeypatch)  # (what 2 requests answered was stored: 2 batches, not 2 parts of one)
    first = FakeEmbeddings(down_after=2)
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=paragraphs(80), title="parts")
        async with semantic(ctx, first):
            with trio.fail_after(30):
                while not first.down:
                    await trio.sleep(0.05)
    second = FakeEmbeddings()
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx, semantic(ctx, second) as index:
        await caught_up(index)
    assert not set(first.embedded) & set(second.embedded)
    assert len(set(first.embedded) | set(second.embedded)) == 2 * doc.doc.chunks  # a passage and a lead each


async def test_documents_ingested_before_are_caught_up_and_forget_drops(tmp_path: Path) -> None:
    """Documents present before the flag was set are embedded; a forgotten document's vectors are dropped."""
    async with opened(tmp_path) as ctx:
        a = await ctx.documents.ingest(text=BISECT, title="bisect")
        b = await ctx.documents.ingest(text=OTHER, title="shutil")
        async with semantic(ctx, FakeEmbeddings()) as index:
            await caught_up(index)
            assert index.status().chunks_embedded == 2
            await ctx.documents.forget(a.doc.doc_id)
            with trio.fail_after(30):
                while index.status().vectors != 2:  # b's passage and its title's lead
                    await trio.sleep(0.05)
            store = VectorStore(ctx.data.vectors_path)
            store.open()
            dim = index.status().dimension
            assert dim is not None
            assert [journal.split("/")[1] for journal in store.done("fake-embed", dim)] == [b.doc.doc_id]
            store.close()


async def test_an_idle_look_asks_the_vectors_file_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught up, looks at an unchanged catalog neither prune, list nor count vectors; an ingest makes the next look embed it."""
    asked: list[str] = []

    def spied(name: str) -> Callable[..., object]:
        method = getattr(VectorStore, name)

        def spy(self: VectorStore, *args: object, **kwargs: object) -> object:
            asked.append(name)
            return method(self, *args, **kwargs)

        return spy

    for name in ("drop_except", "done", "counts", "tally"):
        monkeypatch.setattr(VectorStore, name, spied(name))
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=BISECT, title="bisect")
        async with semantic(ctx, FakeEmbeddings()) as index:
            await caught_up(index)
            asked.clear()
            with trio.fail_after(30):
                start = index.passes
                while index.passes < start + 3:
                    index.wake()
                    await trio.sleep(0.05)
            assert asked == []
            await ctx.documents.ingest(text=OTHER, title="shutil")
            with trio.fail_after(30):
                while index.status().chunks_embedded != 2:
                    await trio.sleep(0.05)
    assert {"drop_except", "tally"} <= set(asked)  # (done and counts in one walk: VectorStore.tally)


async def test_through_open_context_and_loopback_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--embed-model and --embed-base-url wire the embedder: a served fake embeds, and a paraphrase is found."""
    monkeypatch.setattr(vector_task, "QUERY_S", 10.0)  # wiring, not latency: loopback HTTP on a loaded machine
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        config = served_config(tmp_path / "data", fake, url)
        async with open_context(config) as ctx:
            await ctx.documents.ingest(text=BISECT, title="bisect")
            index = ctx.documents.semantic
            assert index is not None
            await caught_up(index)
            result = await ctx.documents.search(QUERY)
            assert index.status().dimension == fake.dimension
        nursery.cancel_scope.cancel()
    assert result.hits and result.hits[0].by_meaning, result.semantic_skipped


def test_fusion_rewards_agreement_and_keeps_keyword_order() -> None:
    """Reciprocal rank fusion: a hit in both lists rises; equal ranks keep keyword first; meaning-only is flagged."""
    keyword = [Hit("j", "1", 9.0), Hit("j", "2", 8.0), Hit("j", "3", 7.0)]
    meaning = [VectorHit("j", "3", 0.9, 0, 0, (5, 40)), VectorHit("j", "4", 0.8, 0, 0, (0, 30))]
    fused = fuse(keyword, meaning, 4)
    assert [(one.hit.item, one.by_meaning, one.focus) for one in fused] == [
        ("3", False, (5, 40)),
        ("1", False, None),
        ("2", False, None),
        ("4", True, (0, 30)),
    ]
    assert fused[0].hit.score == 7.0 and fused[3].hit.score == 0.8 and len(fuse(keyword, meaning, 2)) == 2


def test_long_chunks_are_embedded_in_parts_with_their_trail_and_characters() -> None:
    """A chunk longer than PART_CHARS becomes parts cut at line or sentence ends, each led by
    the heading trail and knowing which characters of the chunk it holds."""
    lines = "\n".join(f"line {i} " + "x" * 60 for i in range(20))
    prose = " ".join(f"Sentence {i} says something of its own." for i in range(40))
    text = f"\n  {lines}\n\n{prose}\n"
    parts = chunk_parts(Chunk(0, text, 0, len(text), ("Guide", "Install"), 600))
    lead = "Guide › Install\n"
    assert len(parts) >= 5 and all(part.text.startswith(lead) for part in parts)
    assert all(len(part.text) <= PART_CHARS + len(lead) for part in parts)
    assert all(part.text.removeprefix(lead) == text[part.start : part.end] for part in parts)
    assert "".join(text[part.start : part.end] for part in parts).replace("\n", "").replace(" ", "") == (
        text.replace("\n", "").replace(" ", "")
    )
    assert all(text[part.end - 1] in ".x" for part in parts)  # never inside a word or sentence here


def test_keyword_hits_are_reranked_by_passage_within_their_places() -> None:
    """After fusion, keyword hits swap places by their best passage; a hit found by meaning keeps its place."""
    weak = Candidate(
        "a", "a", Chunk(0, "lru cache is mentioned. " + "filler words here. " * 30 + "maxsize", 0, 1, (), 10), 5.2
    )
    strong = Candidate("b", "b", Chunk(1, "lru cache maxsize sets how many calls are kept", 0, 1, (), 10), 5.0)
    meaning = Candidate("c", "c", Chunk(2, "remember results of earlier calls", 0, 1, (), 10), 0.7, by_meaning=True)
    ordered = rerank_fused([weak, meaning, strong], ["lru", "cache", "maxsize"])
    assert [c.doc_id for c in ordered] == ["b", "c", "a"]


def test_a_hit_found_by_meaning_shows_the_part_that_matched() -> None:
    """A chunk too big for its share, with a focus (found by meaning), shows the lines of its
    best part, not a window of the query's words; without one, the keyword window."""
    source = "".join(f"Line {n} is about topic{n} of the manual.\n" for n in range(80))
    chunk = Chunk(0, source, 0, len(source), ("Manual",), TokenModel.cold().estimate(source))
    start = source.index("Line 50 ")
    focus = (start, source.index("Line 52 ") - 1)
    found = Candidate("d", "manual", chunk, 0.61, by_meaning=True, focus=focus)
    (hit,), omitted, _ = pack_hits([found], 150, TokenModel.cold(), ["topic3"])
    assert omitted == 0 and hit.by_meaning and hit.cut
    assert "Line 50 is about topic50" in hit.text and "Line 51 " in hit.text and "topic3 " not in hit.text
    keyword = Candidate("d", "manual", chunk, 3.2)  # no focus: hybrid_order found the words match well
    (hit,), _, _ = pack_hits([keyword], 150, TokenModel.cold(), ["topic3"])
    assert "topic3 " in hit.text and not hit.by_meaning


def test_a_hit_found_by_meaning_shows_about_its_part_and_leaves_the_room_to_the_next() -> None:
    """A part found by meaning (here two lines, ~20 tokens: under FIRST_FOCUS_CHARS, so also as the first
    hit) is shown with a margin of half its size, not a window grown to FOCUS_TOKENS: at 1,000 tokens the
    hit after it is shown whole."""
    source = "".join(f"Line {n} is about topic{n} of the manual.\n" for n in range(80))
    chunk = Chunk(0, source, 0, len(source), ("Manual",), TokenModel.cold().estimate(source))
    focus = (source.index("Line 50 "), source.index("Line 52 ") - 1)
    found = Candidate("d", "manual", chunk, 0.61, by_meaning=True, focus=focus)
    after = "".join(f"Entry {n} of the other page.\n" for n in range(60))
    other = Candidate("e", "other", Chunk(0, after, 0, len(after), ("Other",), TokenModel.cold().estimate(after)), 0.5)
    (hit, second), omitted, _ = pack_hits([found, other], 1000, TokenModel.cold(), ["topic3"])
    assert omitted == 0 and "Line 50 is about topic50" in hit.text and "Line 51 " in hit.text
    shown = [line for line in hit.text.split("\n") if line.startswith("Line ")]
    assert len(shown) <= 4  # two lines and half as much around them, at least FOCUS_LEAST tokens
    assert hit.tokens <= max(FOCUS_LEAST, 1.5 * TokenModel.cold().estimate(source[focus[0] : focus[1]])) + 2
    assert second.text == after and not second.cut


def test_a_chunk_is_embedded_in_its_passages_then_its_entries_leads() -> None:
    """After the passages, each API entry of the chunk is one more part: its trail, kind, name and
    first sentence, holding the characters from the entry's line to that sentence's end."""
    text = (
        ".. function:: getcwd()\n\n   Return a string representing the current working directory.\n\n"
        ".. function:: getcwdb()\n\n   Return a bytestring representing the current working directory.\n"
    )
    parts = chunk_parts(Chunk(0, text, 0, len(text), ("os", "Files and Directories"), 40))
    passages, leads = parts[:1], parts[1:]
    assert passages[0].text == "os › Files and Directories\n" + text.strip()
    assert [part.text for part in leads] == [
        "os › Files and Directories\nfunction getcwd(): Return a string representing the current working directory.",
        "os › Files and Directories\nfunction getcwdb(): Return a bytestring representing the current working directory.",
    ]
    assert text[leads[0].start : leads[0].end] == (
        ".. function:: getcwd()\n\n   Return a string representing the current working directory."
    )


def _faq_id_hit() -> Candidate:
    """The Programming FAQ's chunk on id() (Debian's python3.11-doc, chunked as ingest does) as a hit found by
    meaning, focused on the lead all-MiniLM-L6-v2 put nearest "Why do two different objects sometimes show the
    same id number?" (python17): the question's title and the sentence under it."""
    text = (PY_SOURCES / "faq" / "programming.rst.txt").read_text(encoding="utf-8")
    model = TokenModel.cold()
    title = "Why does the result of ``id()`` appear to be not unique?"
    chunk = next(c for c in chunk_document(text, chunk_tokens=800, overlap_tokens=80, model=model, kind=Kind.RST)
                 if title in c.text)  # fmt: skip
    lead = next(part for part in entry_leads(chunk.text, chunk.trail) if chunk.text[part.start :].startswith(title))
    assert lead.end - lead.start >= FIRST_FOCUS_CHARS  # a title and a sentence: no tail of a chunk
    return Candidate(
        "faq.programming", "faq/programming.rst.txt", chunk, 0.62, by_meaning=True, focus=(lead.start, lead.end)
    )


@pytest.mark.skipif(not PY_SOURCES.is_dir(), reason="needs Debian's python3.11-doc")
def test_the_first_hit_found_by_meaning_shows_the_answer_under_its_part() -> None:
    """The first hit shown, found by meaning, shows FIRST_FOCUS_MARGIN times its part: the FAQ's answer, two
    sentences under the question's title and first sentence; the same hit under another shows FOCUS_MARGIN
    times it, and leaves that room to the hits after it."""
    answer = "next freshly created object is allocated at the same position"
    found = _faq_id_hit()
    other = "".join(f"Entry {n} of the other page.\n" for n in range(200))
    first_other = Candidate("e", "other", Chunk(0, other, 0, len(other), (), TokenModel.cold().estimate(other)), 5.0)
    terms = ["two", "different", "objects", "sometimes", "show", "same", "id", "number"]
    (hit, _), _, _ = pack_hits([found, first_other], 1000, TokenModel.cold(), terms)
    assert hit.by_meaning and hit.cut and answer in normal(hit.text)
    focus = found.focus
    assert focus is not None
    part_tokens = math.ceil((focus[1] - focus[0]) * tokens_per_char(found.chunk))  # as packing sizes it
    assert hit.tokens <= math.ceil(FIRST_FOCUS_MARGIN * part_tokens)
    (_, second), _, _ = pack_hits([first_other, found], 1000, TokenModel.cold(), terms)
    assert second.doc_id == "faq.programming" and answer not in normal(second.text)
    assert second.tokens <= math.ceil(FOCUS_MARGIN * part_tokens)
