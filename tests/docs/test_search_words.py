"""doc_search: chunks holding more of the words come first; long queries use their first words only."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import trio

from ctxtrio._limits import QUERY_CHARS, SEARCH_WORDS
from ctxtrio.docs.render import render_search

from .conftest import opened

if TYPE_CHECKING:
    from pathlib import Path

_WORDS = [f"word{n}" for n in range(300)]


def _paragraphs(seed: int, count: int, words: int = 25) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(_WORDS, k=words)) + "." for _ in range(count)]


async def test_a_pasted_passage_finds_its_own_chunk_first(tmp_path: Path) -> None:
    """Every chunk shares many words with the others; the one holding the pasted paragraph is found first."""
    paragraphs = _paragraphs(1, 120)
    async with opened(tmp_path, chunk_tokens=400, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text="\n\n".join(paragraphs), doc_id="many")
        for wanted in (7, 60, 113):
            found = await ctx.documents.search(paragraphs[wanted], budget_tokens=4000, limit=3)
            assert paragraphs[wanted] in found.hits[0].text
            assert found.words_left_out  # 25 random words of 300 hold more than 16 distinct ones


async def test_a_huge_query_is_cut_to_its_first_words_and_says_so(tmp_path: Path) -> None:
    """A query of 200,000 characters answers at once, from its first distinct words, and says so briefly."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text="\n\n".join(_paragraphs(2, 40)), doc_id="d")
        first = " ".join(_WORDS[:SEARCH_WORDS])
        query = first + " " + " ".join(random.Random(3).choices(_WORDS, k=40_000))
        assert len(query) > 20 * QUERY_CHARS
        with trio.fail_after(20):  # a guard against the whole query being searched, not a benchmark
            found = await ctx.documents.search(query, budget_tokens=2000, limit=5)
        assert found.hits and found.words_left_out
        text = render_search(found)
        assert f"Only its first {SEARCH_WORDS} distinct words were searched." in text
        assert len(text.split("\n\n")[0]) < 400  # the head echoes the query cut short, not 200,000 characters
        short = await ctx.documents.search(first, budget_tokens=2000, limit=5)
        assert not short.words_left_out
        assert "distinct words were searched" not in render_search(short)
        same = [(hit.doc_id, hit.index) for hit in found.hits]  # the note costs a little of the budget
        assert [(hit.doc_id, hit.index) for hit in short.hits][: len(same)] == same
