"""The vectors file: derived, keyed by (model, dimension), pruned with its journals, and healed when damaged."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from ctxtrio.store.vectors import VectorRow, VectorStore

if TYPE_CHECKING:
    from pathlib import Path


def _row(journal: str, item: str, vector: list[float] | None, part: int = 0) -> VectorRow:
    return VectorRow(journal, item, part if vector is not None else -1, 10, 20, vector)


def test_nearest_takes_each_chunk_by_its_best_part_within_journals(tmp_path: Path) -> None:
    """Best part per chunk, best first, optionally only within the journals named; refused chunks never match."""
    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    store.add(
        "m",
        2,
        [
            _row("a", "0", [1.0, 0.0]),
            _row("a", "0", [0.0, 1.0], part=1),
            _row("b", "0", [0.6, 0.8]),
            _row("b", "1", None),
        ],
    )
    hits = store.nearest("m", [0.0, 1.0], journals=None, limit=5)
    assert [(h.journal, h.item, round(h.score, 2)) for h in hits] == [("a", "0", 1.0), ("b", "0", 0.8)]
    assert [h.journal for h in store.nearest("m", [0.0, 1.0], journals=["b"], limit=5)] == ["b"]
    store.add("m", 2, [_row("c", "0", [0.0, 1.0])])  # grows the matrix already in memory
    assert {h.journal for h in store.nearest("m", [0.0, 1.0], journals=None, limit=5)} == {"a", "b", "c"}
    assert store.counts("m", 2) == (3, 1, 4)
    assert store.nearest("other", [0.0, 1.0], journals=None, limit=5) == []
    store.close()


def test_prune_keeps_only_current_journals_of_the_model(tmp_path: Path) -> None:
    """drop_except removes journals gone and vectors of another model or dimension."""
    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    store.add("m", 2, [_row("a", "0", [1.0, 0.0]), _row("gone", "0", [1.0, 0.0])])
    store.add("m", 3, [_row("a", "0", [1.0, 0.0, 0.0])])
    store.add("old", 2, [_row("a", "0", [1.0, 0.0])])
    assert store.drop_except("m", 2, {"a"}) == 3
    assert store.done("m", 2) == {"a": {"0"}} and store.dimensions("m") == [2]
    store.close()


def test_done_of_one_journal_reads_only_its_items(tmp_path: Path) -> None:
    """done(journal=) gives that journal's items alone (the session embedder asks per session)."""
    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    store.add("m", 2, [_row("a", "0", [1.0, 0.0]), _row("a", "1", [0.0, 1.0]), _row("b", "0", [1.0, 0.0])])
    assert store.done("m", 2, journal="a") == {"a": {"0", "1"}}
    assert store.done("m", 2, journal="none") == {}
    assert store.done("m", 2) == {"a": {"0", "1"}, "b": {"0"}}
    store.close()


def test_a_damaged_file_is_started_afresh(tmp_path: Path) -> None:
    """A file that is not a database is deleted and created anew (the journals are the truth)."""
    path = tmp_path / "v.sqlite3"
    path.write_bytes(b"not a database at all" * 100)
    store = VectorStore(path)
    store.open()
    assert store.dimensions("m") == []
    store.close()


def test_a_hit_carries_the_characters_of_its_best_part(tmp_path: Path) -> None:
    """Each part keeps the span of the chunk it holds; a hit names its best part's span, also after a reopen."""
    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    rows = [
        VectorRow("a", "0", 0, 10, 20, [1.0, 0.0], (0, 500)),
        VectorRow("a", "0", 1, 10, 20, [0.0, 1.0], (502, 990)),
    ]
    store.add("m", 2, rows)
    assert store.nearest("m", [0.0, 1.0], journals=None, limit=1)[0].span == (502, 990)
    store.close()
    store.open()
    assert store.nearest("m", [1.0, 0.0], journals=None, limit=1)[0].span == (0, 500)
    store.close()


def test_vectors_of_the_first_layout_are_dropped_and_embedded_again(tmp_path: Path) -> None:
    """A file of schema 1 (whole-chunk parts, no spans) opens empty: its vectors are derived and re-made."""
    path = tmp_path / "v.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE vectors (model TEXT, dim INTEGER, journal TEXT, item TEXT, part INTEGER, "
        "line_start INTEGER, line_end INTEGER, vec BLOB, PRIMARY KEY (model, dim, journal, item, part))"
    )
    conn.execute("INSERT INTO vectors VALUES ('m', 2, 'a', '0', 0, 1, 2, x'0000803f00000000')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    store = VectorStore(path)
    store.open()
    assert store.done("m", 2) == {} and store.dimensions("m") == []
    store.close()


def test_vectors_without_entry_leads_are_dropped_and_embedded_again(tmp_path: Path) -> None:
    """A file of schema 2 (spans, but chunks embedded before their entries' leads were parts) opens empty."""
    path = tmp_path / "v.sqlite3"
    store = VectorStore(path)
    store.open()
    store.add("m", 2, [VectorRow("a", "0", 0, 1, 2, [1.0, 0.0], (0, 10))])
    assert store.done("m", 2) == {"a": {"0"}}
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    store.open()
    assert store.done("m", 2) == {} and store.dimensions("m") == []
    store.close()
