"""Forgetting a journal's rows by their rowid ranges (schema 4), an index of schema 3 gaining
them, and a removal's rows forgotten by a later flush when the index was busy."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ctxtrio.store.handle import IndexHealth
from ctxtrio.store.index import Forget, SearchIndex
from ctxtrio.store.index_flush import flush_index
from ctxtrio.store.index_tables import SCHEMA_VERSION, TOKENIZER
from ctxtrio.store.layout import prepare_data_dir
from ctxtrio.store.records import StoredRecord
from ctxtrio.store.rows import IndexRow


def _add(index: SearchIndex, journal: str, words: list[str], start: int = 0) -> None:
    """Index one row per word as records of ``journal`` from byte ``start`` (fake ranges of 10 bytes)."""
    records = [StoredRecord(start + 10 * n, start + 10 * n + 10, {"seq": n}) for n in range(len(words))]
    rows = {start + 10 * n: [IndexRow("chunks", str(n), f"{word} common")] for n, word in enumerate(words)}
    index.index_batch([(journal, Path("/nonexistent") / journal, records, start + 10 * len(words), rows)])


def _journals_found(index: SearchIndex, word: str) -> list[str]:
    return sorted(hit.journal for hit in index.search("chunks", [word], journals=None, limit=100))


def test_forgetting_a_journal_removes_its_rows_from_every_batch_and_no_other(tmp_path: Path) -> None:
    """Rows of one journal indexed in several batches, between other journals' rows, are all
    forgotten (one range per batch); the rows of the journals around them stay."""
    index = SearchIndex(tmp_path / "index.sqlite3")
    index.open()
    try:
        _add(index, "docs/a/1.jsonl", ["alpha", "apple"])
        _add(index, "docs/b/1.jsonl", ["beta", "banana"])
        _add(index, "docs/a/1.jsonl", ["avocado"], start=20)
        _add(index, "docs/c/1.jsonl", ["gamma"])
        index.forget("docs/a/1.jsonl")
        assert _journals_found(index, "common") == ["docs/b/1.jsonl"] * 2 + ["docs/c/1.jsonl"]
        assert _journals_found(index, "avocado") == [] and _journals_found(index, "apple") == []
        assert set(index.inventory()) == {"docs/b/1.jsonl", "docs/c/1.jsonl"}
        index.forget("docs/c/1.jsonl")
        assert _journals_found(index, "common") == ["docs/b/1.jsonl"] * 2
    finally:
        index.close()
    with sqlite3.connect(tmp_path / "index.sqlite3") as conn:
        assert {row[0] for row in conn.execute("SELECT journal FROM ranges")} == {"docs/b/1.jsonl"}


def test_an_index_of_schema_3_keeps_its_rows_and_gains_their_ranges(tmp_path: Path) -> None:
    """Opening an index of schema 3 adds the rowid ranges of the rows it holds (no re-index:
    ``open`` says nothing was dropped), after which forgetting a journal removes its rows."""
    path = tmp_path / "index.sqlite3"
    with sqlite3.connect(path) as old:
        old.executescript(
            "CREATE TABLE journals (name TEXT PRIMARY KEY, indexed_offset INTEGER NOT NULL);"
            "CREATE VIRTUAL TABLE chunks USING fts5(terms, heading, journal UNINDEXED, item UNINDEXED,"
            f' line_start UNINDEXED, line_end UNINDEXED, tokenize="{TOKENIZER}");'
            "INSERT INTO journals VALUES ('docs/a/1.jsonl', 20), ('docs/b/1.jsonl', 10);"
            "INSERT INTO chunks VALUES ('alpha common', '', 'docs/a/1.jsonl', '0', 0, 10);"
            "INSERT INTO chunks VALUES ('beta common', '', 'docs/b/1.jsonl', '0', 0, 10);"
            "INSERT INTO chunks VALUES ('apple common', '', 'docs/a/1.jsonl', '1', 10, 20);"
            "PRAGMA user_version = 3;"
        )
    old.close()
    index = SearchIndex(path)
    try:
        assert index.open() is False  # nothing to re-index: the rows were kept
        assert _journals_found(index, "common") == ["docs/a/1.jsonl"] * 2 + ["docs/b/1.jsonl"]
        index.forget("docs/a/1.jsonl")
        assert _journals_found(index, "common") == ["docs/b/1.jsonl"]
        assert index.watermark("docs/b/1.jsonl") == 10
    finally:
        index.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    check.close()


def test_a_removal_deferred_by_a_busy_index_is_forgotten_by_the_next_flush(tmp_path: Path) -> None:
    """While index updates back off from a busy lock, a removed journal's rows are kept to forget
    (``IndexHealth.unforgotten``), not dropped from the work; the next flush that gets through
    forgets them, with its own work."""
    data = prepare_data_dir(tmp_path / "data")
    index = SearchIndex(data.index_path)
    index.open()
    try:
        _add(index, "docs/a/1.jsonl", ["alpha"])
        _add(index, "docs/b/1.jsonl", ["beta"])
        health = IndexHealth(lagging={"docs/x/1.jsonl": data.docs / "x" / "1.jsonl"})
        health.retry_at = health.clock.now() + 3600.0  # backing off
        flush_index(data, index, [Forget("docs/a/1.jsonl")], health)
        assert health.unforgotten == {"docs/a/1.jsonl"}
        assert _journals_found(index, "common") == ["docs/a/1.jsonl", "docs/b/1.jsonl"]
        health.retry_at = 0.0
        flush_index(data, index, [Forget("docs/b/1.jsonl")], health)
        assert _journals_found(index, "common") == []
        assert health.unforgotten == set() and health.lagging == {}
        assert index.inventory() == {}
    finally:
        index.close()
