"""VectorStore.counts (vector_counts.item_counts): what context_status says of the vectors, from one walk of the rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.store import vector_counts, vector_schema
from ctxtrio.store.vectors import VectorRow, VectorStore

if TYPE_CHECKING:
    from pathlib import Path


def _row(journal: str, item: str, part: int, vector: list[float] | None) -> VectorRow:
    return VectorRow(journal, item, part, 10, 20, vector)


def test_items_refused_in_whole_or_in_part_count_as_refused_and_their_parts_as_vectors(tmp_path: Path) -> None:
    """(embedded, refused, vectors) of one model and dimension: an item with a part -1 row is refused, whether or
    not some of its parts were taken; those parts count among the vectors; another model's or dimension's rows
    count for none."""
    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    store.add("m", 2, [_row("a", "0", 0, [1.0, 0.0]), _row("a", "0", 1, [0.0, 1.0])])  # embedded, two parts
    store.add("m", 2, [_row("a", "1", -1, None)])  # refused whole
    store.add("m", 2, [_row("b", "0", 0, [0.6, 0.8]), _row("b", "0", -1, None)])  # refused in part
    store.add("m", 2, [_row("b", "1", 0, [0.8, 0.6])])  # embedded
    store.add("m", 3, [_row("a", "0", 0, [1.0, 0.0, 0.0])])  # another dimension
    store.add("other", 2, [_row("a", "2", -1, None)])  # another model
    assert store.counts("m", 2) == (2, 2, 4)
    assert store.counts("m", 3) == (1, 0, 1)
    assert store.counts("absent", 2) == (0, 0, 0)
    store.close()


def test_counting_walks_the_rows_key_in_order_without_sorting(tmp_path: Path) -> None:
    """item_counts groups by the rows' primary key in its order: no temporary tree to sort keys into (the
    count of distinct concatenated keys before sorted every row twice: 671 ms of 600,000 rows, the store's
    lock held meanwhile)."""
    conn = vector_schema.connect(tmp_path / "v.sqlite3")
    said: list[str] = []  # (the statements as run, their values in place)
    conn.set_trace_callback(said.append)
    assert vector_counts.item_counts(conn, "m", 2) == (0, 0, 0)
    conn.set_trace_callback(None)
    (query,) = [sql for sql in said if sql.lstrip().upper().startswith("SELECT")]
    plan = [str(step[3]) for step in conn.execute(f"EXPLAIN QUERY PLAN {query}")]
    assert any("USING PRIMARY KEY" in step for step in plan), plan
    assert not any("TEMP B-TREE" in step for step in plan), plan
    conn.close()
