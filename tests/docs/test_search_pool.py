"""Keyword search re-ranks, beside its first rows, the later rows BM25 scores above their mean."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.docs.search import above_mean
from ctxtrio.store.rows import Hit

from .conftest import opened

#: Node.js 20's doc/api/buffer.md, Python 3.11's threading.rst and multiprocessing.rst (fixtures/NOTICE.txt).
FIXTURES = Path(__file__).parent / "fixtures"
FILES = ("node_buffer.md", "python_threading.rst.txt", "python_multiprocessing.rst.txt")


async def test_a_row_of_a_lower_level_that_bm25_scores_high_is_reranked_too(tmp_path: Path) -> None:
    """'method writeuintbe instance': many rows of the three references hold 'method' and 'instance',
    so the index's first levels (rows holding more of the query's words) fill the first rows; the
    `buf.writeUIntBE` entry, holding only the rare 'writeuintbe', comes after them, yet BM25 scores
    it above their mean, so it is re-ranked with them and comes first."""
    async with opened(tmp_path, FIXTURES) as ctx:
        for name in FILES:
            await ctx.documents.ingest(file_path=str(FIXTURES / name), doc_id=name.split(".")[0])
        found = await ctx.documents.search("method writeuintbe instance", budget_tokens=1000)
        three = await ctx.documents.search("method writeuintbe instance", budget_tokens=100_000, limit=3)
    assert "### `buf.writeUIntBE(value, offset, byteLength)`" in found.hits[0].text
    assert len(three.hits) == 3 and three.hits[0].index == found.hits[0].index  # the pool re-ranked, then cut to limit


def test_only_later_rows_above_the_mean_of_the_first_join() -> None:
    """Rows past the first limit + 1 join when their BM25 is above the first limit's mean; none past a short list."""
    hits = [Hit("j", str(n), score) for n, score in enumerate([9.0, 5.0, 4.0, 3.0, 7.0, 2.0, 6.5])]
    assert [hit.item for hit in above_mean(hits, 3)] == ["4", "6"]  # the first three's mean is 6
    assert above_mean(hits[:4], 3) == [] and above_mean(hits, 0) == []
