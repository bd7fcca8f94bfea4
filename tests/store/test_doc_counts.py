"""The index says how many rows hold each word (document frequency), for weighing rare words."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING

from ctxtrio.store.index import SearchIndex
from ctxtrio.store.records import StoredRecord
from ctxtrio.store.rows import IndexRow

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@contextmanager
def indexed(tmp_path: Path, texts: list[str]) -> Iterator[SearchIndex]:
    """An open index whose chunks are ``texts``, one row each (row ``n`` of journal ``j``)."""
    records = [StoredRecord(10 * n, 10 * n + 10, {"seq": n}) for n in range(len(texts))]
    rows = {10 * n: [IndexRow("chunks", str(n), text)] for n, text in enumerate(texts)}
    index = SearchIndex(tmp_path / "index.sqlite3")
    index.open()
    try:
        index.index_batch([("j", tmp_path / "nonexistent", records, 10 * len(texts), rows)])
        yield index
    finally:
        index.close()


def test_doc_counts_are_rows_holding_each_term(tmp_path: Path) -> None:
    """Rows, not occurrences: 'session' in 3 rows (twice in one), 'currval' in 1, an absent word 0."""
    texts = ["currval reads the session value", "session session state", "a session ends", "nothing here"]
    with indexed(tmp_path, texts) as index:
        counts = index.doc_counts("chunks", ["session", "currval", "absent", "session"])
        assert counts == {"session": 3, "currval": 1, "absent": 0}
        assert index.search("chunks", ["currval"], journals=None, limit=5)[0].item == "0"  # the temp table is harmless


def test_many_terms_are_counted_in_batches_alike(tmp_path: Path) -> None:
    """More terms than one statement counts (2.5 batches): each counted as alone, absent ones 0, order kept."""
    texts = [f"word{n} word{n + 1} common" for n in range(600)]
    with indexed(tmp_path, texts) as index:
        asked = [f"word{n}" for n in range(0, 1000, 2)] + ["common", "absent"]
        counts = index.doc_counts("chunks", asked)
        assert list(counts) == asked
        assert counts["word0"] == 1 and counts["word2"] == 2 and counts["word600"] == 1 and counts["word998"] == 0
        assert counts["common"] == 600 and counts["absent"] == 0
        assert all(counts[term] == index.doc_counts("chunks", [term])[term] for term in asked[::37])
