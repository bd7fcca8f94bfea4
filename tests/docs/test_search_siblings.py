"""The chunk that answers, not the one that repeats the query's words: a found document's other
chunks are re-ranked with it (search.pool), and inflections with a doubled consonant match."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxtrio.docs import search
from ctxtrio.docs.search import above_mean, pool
from ctxtrio.store.rows import Hit

from .conftest import normal, opened

#: Python 3.11's threading.rst and multiprocessing.rst, Node.js 20's buffer.md (fixtures/NOTICE.txt).
FIXTURES = Path(__file__).parent / "fixtures"
FILES = ("python_threading.rst.txt", "python_multiprocessing.rst.txt", "node_buffer.md")


def test_later_rows_of_a_document_among_the_first_join_the_pool() -> None:
    """Past the first limit + 1 rows: those above the first limit's mean BM25 (as before), and,
    among the next (limit + 1) // 2, those of a document one of the first limit + 1 is of,
    whatever their score; none past a short list."""
    scores = [("a", 9.0), ("b", 5.0), ("c", 4.0), ("d", 3.0), ("e", 7.0), ("a", 2.0), ("f", 6.5), ("d", 1.0)]
    hits = [Hit(journal, str(n), score) for n, (journal, score) in enumerate(scores)]
    assert [hit.item for hit in above_mean(hits, 3)] == ["4", "6"]  # the first three's mean is 6
    assert [hit.item for hit in pool(hits, 3)] == ["4", "5", "6"]  # 5 of a; 7 of d is past the next two
    assert pool(hits[:4], 3) == [] and pool(hits, 0) == []


async def test_an_inflection_with_a_doubled_consonant_counts_for_the_passage(tmp_path: Path) -> None:
    """'How do I stop a timer before it runs?' over threading.rst: the chunk of class Timer that says
    'The timer can be stopped (before its action has begun)' comes first (with 'stopped' read as
    'stopp' the chunk after it, with 'timer' more often, came first)."""
    async with opened(tmp_path, FIXTURES) as ctx:
        for name in FILES:
            await ctx.documents.ingest(file_path=str(FIXTURES / name), doc_id=name.split(".")[0])
        found = await ctx.documents.search("How do I stop a timer before it runs?", budget_tokens=500)
    assert "The timer can be stopped" in found.hits[0].text


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("pg_dump --if-exists", "This option is not valid unless --clean is also specified"),
        ("When can ALTER TABLE SET NOT NULL skip the table scan?", "then the table scan is skipped"),
    ],
)
async def test_the_answering_chunk_of_a_found_page_is_shown(
    tmp_path: Path, pg_manual: Path, query: str, answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over the whole manual, pg_dump's page ranks, but through the chunks that name pg_dump most;
    its --if-exists entry is the 13th row, below the mean. ALTER TABLE's chunk that says 'the table
    scan is skipped' is the 12th (and holds 'skip' and 'scan' only as 'skipped' and 'scanning').
    Re-ranked with their page's other chunks, each is inside a 1,000-token answer; with the rows
    above the mean alone (the rule before), neither is."""
    async with opened(tmp_path, pg_manual) as ctx:
        for path in sorted(pg_manual.iterdir()):
            await ctx.documents.ingest(file_path=str(path), doc_id=path.stem)
        found = await ctx.documents.search(query, budget_tokens=1000)
        monkeypatch.setattr(search, "pool", above_mean)
        before = await ctx.documents.search(query, budget_tokens=1000)
    assert normal(answer) in normal(found.rendered)
    assert normal(answer) not in normal(before.rendered)
