"""The vectors file: derived, keyed by (model, dimension), pruned with its journals, and healed when damaged."""

from __future__ import annotations

import sqlite3
import struct
import time
from typing import TYPE_CHECKING

from ctxtrio.store import vector_schema, vectors
from ctxtrio.store.vector_schema import text_digest
from ctxtrio.store.vectors import VectorRow, VectorStore

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


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


def _legacy_file(path: Path, version: int, rows: list[tuple[str, str, int, tuple[int, int], list[float]]]) -> None:
    """A vectors file of schema 2 or 3 as those trees wrote it: one table, the vector in each row."""
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE vectors (model TEXT NOT NULL, dim INTEGER NOT NULL, journal TEXT NOT NULL, item TEXT NOT NULL, "
        "part INTEGER NOT NULL, line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, span_start INTEGER NOT NULL, "
        "span_end INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, dim, journal, item, part))"
    )
    for journal, item, part, span, vector in rows:
        blob = struct.pack(f"{len(vector)}f", *vector)
        conn.execute("INSERT INTO vectors VALUES ('m', 2, ?, ?, ?, 1, 2, ?, ?, ?)", (journal, item, part, *span, blob))
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()


def _part(item: str, part: int, span: tuple[int, int], text: str) -> tuple[str, int, tuple[int, int], bytes]:
    return (item, part, span, text_digest(text))


def _one_text(path: Path, text: str) -> tuple[VectorStore, tuple[str, int, tuple[int, int], bytes]]:
    """A vectors file at ``path`` holding one part (journal "a", item "0") of ``text``, closed; the store and the part."""
    store = VectorStore(path)
    store.open()
    part = _part("0", 0, (0, 5), text)
    store.add("m", 2, [VectorRow("a", "0", 0, 1, 2, [1.0, 0.0], (0, 5), part[3])])
    store.close()
    return store, part


def test_an_older_files_vectors_are_taken_by_the_part_holding_the_same_characters(tmp_path: Path) -> None:
    """A file of schema 3 opens with no rows, but each part of the same (journal, item, part) holding
    the same characters takes its old vector (no request); a part holding other characters does not,
    and what no part took goes once the embedder has caught up."""
    path = tmp_path / "v.sqlite3"
    _legacy_file(path, 3, [("a", "0", 0, (0, 10), [1.0, 0.0]), ("a", "0", 1, (12, 30), [0.0, 1.0])])
    store = VectorStore(path)
    store.open()
    assert store.done("m", 2) == {} and store.dimensions("m") == [2]
    same, moved = _part("0", 0, (0, 10), "T\npassage"), _part("0", 1, (12, 31), "T\nlead, one more character")
    assert store.known("m", 2, "a", [same, moved]) == {same[3]}
    store.add(
        "m",
        2,
        [
            VectorRow("a", "0", 0, 1, 2, None, (0, 10), same[3]),
            VectorRow("a", "0", 1, 1, 2, [0.6, 0.8], (12, 31), moved[3]),
        ],
    )
    assert [(h.item, round(h.score, 2)) for h in store.nearest("m", [1.0, 0.0], journals=None, limit=1)] == [("0", 1.0)]
    store.collect("m", 2, legacy=True)
    store.close()
    conn = sqlite3.connect(path)
    assert {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {
        "meta",
        "texts",
        "rows",
    }
    conn.close()


def test_vectors_an_older_tree_wrote_after_an_upgrade_are_kept_for_the_next_one(tmp_path: Path) -> None:
    """Upgraded (a schema-3 file's rows kept as ``legacy``, not all taken yet), then opened by an
    older tree, which embeds into a new ``vectors`` table and marks the file schema 3, then opened
    by this tree again: both older tables' vectors are taken, the newer row winning (the older tree's
    table is not dropped for the first one's, which would cost its whole embedding again)."""
    path = tmp_path / "v.sqlite3"
    _legacy_file(path, 3, [("a", "0", 0, (0, 10), [1.0, 0.0]), ("a", "2", 0, (0, 4), [1.0, 0.0])])
    store = VectorStore(path)
    store.open()
    store.close()
    _legacy_file(path, 3, [("a", "1", 0, (0, 8), [0.0, 1.0]), ("a", "2", 0, (0, 4), [0.0, 1.0])])
    store.open()
    first, second, both = _part("0", 0, (0, 10), "zero"), _part("1", 0, (0, 8), "one"), _part("2", 0, (0, 4), "two")
    assert store.known("m", 2, "a", [first, second, both]) == {first[3], second[3], both[3]}
    store.add("m", 2, [VectorRow("a", "2", 0, 1, 2, None, (0, 4), both[3])])
    assert [round(h.score, 2) for h in store.nearest("m", [0.0, 1.0], journals=None, limit=1)] == [1.0]
    store.close()


def test_a_file_of_a_newer_layout_is_taken_over_and_the_log_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file a newer ctxtrio wrote (a higher user_version, or texts of a higher version) is brought to
    this layout as the older trees did with any other layout, rows (and texts of another version)
    dropped; but a warning names what is dropped, so a user running two versions on one data dir can
    see why the newer one embeds again."""
    path = tmp_path / "v.sqlite3"
    store, text = _one_text(path, "x")
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {vector_schema.ROWS_VERSION + 1}")
    conn.commit()
    conn.close()
    with caplog.at_level("WARNING", logger="ctxtrio.store"):
        store.open()
    assert store.done("m", 2) == {} and store.known("m", 2, "a", [text]) == {text[3]}
    assert "newer ctxtrio" in caplog.text and "rows" in caplog.text
    store.close()
    caplog.clear()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = ? WHERE name = 'texts'", (vector_schema.TEXTS_VERSION + 1,))
    conn.commit()
    conn.close()
    with caplog.at_level("WARNING", logger="ctxtrio.store"):
        store.open()
    assert store.known("m", 2, "a", [text]) == set()
    assert "newer ctxtrio" in caplog.text and "vectors" in caplog.text
    store.close()


def test_a_first_layout_file_is_dropped(tmp_path: Path) -> None:
    """Schema 1 kept no characters per part: nothing can be matched, the file opens empty."""
    path = tmp_path / "v.sqlite3"
    _legacy_file(path, 1, [("a", "0", 0, (0, 10), [1.0, 0.0])])
    store = VectorStore(path)
    store.open()
    assert store.dimensions("m") == [] and store.known("m", 2, "a", [_part("0", 0, (0, 10), "x")]) == set()
    store.close()


def test_a_new_rows_layout_keeps_every_texts_vector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bump of ROWS_VERSION drops the rows alone: each text's vector is still known by its digest."""
    path = tmp_path / "v.sqlite3"
    store, text = _one_text(path, "T\nhello")
    monkeypatch.setattr(vector_schema, "ROWS_VERSION", vector_schema.ROWS_VERSION + 1)
    store.open()
    assert store.done("m", 2) == {} and store.dimensions("m") == [2]
    assert store.known("m", 2, "b", [text]) == {text[3]}
    store.close()


def test_a_text_is_stored_once_and_named_by_rows_of_any_journal(tmp_path: Path) -> None:
    """A row without a vector names a text already stored; both rows match, the file holds one vector."""
    path = tmp_path / "v.sqlite3"
    store = VectorStore(path)
    store.open()
    text = _part("0", 0, (0, 5), "T\nhello")
    assert store.add("m", 2, [VectorRow("a", "0", 0, 1, 2, [1.0, 0.0], (0, 5), text[3])]) == (1, 1)
    assert store.known("m", 2, "b", [text]) == {text[3]}
    assert store.add("m", 2, [VectorRow("b", "3", 0, 7, 9, None, (0, 5), text[3])]) == (1, 1)
    assert store.add("m", 2, [VectorRow("c", "4", 0, 7, 9, None, (0, 5), text_digest("never stored"))]) == (0, 0)
    assert {(h.journal, h.item) for h in store.nearest("m", [1.0, 0.0], journals=None, limit=5)} == {
        ("a", "0"),
        ("b", "3"),
    }
    store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM texts").fetchone() == (1,)
    conn.close()


def test_texts_no_row_names_are_bounded_most_recent_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dropping rows keeps their texts (an item ingested again costs nothing), but collect keeps at
    most SPARE_MIN of them, the most recently named, and never a text a row names."""
    monkeypatch.setattr(vectors, "SPARE_MIN", 2)
    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    texts = [_part(str(i), 0, (0, 5), f"text {i}") for i in range(6)]
    for i, text in enumerate(texts):
        store.add("m", 2, [VectorRow("a" if i < 5 else "b", text[0], 0, 1, 2, [1.0, float(i)], (0, 5), text[3])])
        time.sleep(0.002)  # (``used`` is in milliseconds)
    assert store.drop_except("m", 2, {"b"}) == 5
    assert store.known("m", 2, "a", texts) == {text[3] for text in texts}
    assert store.collect("m", 2) == 3
    assert store.known("m", 2, "a", texts) == {texts[3][3], texts[4][3], texts[5][3]}
    assert store.collect("m", 2) == 0
    store.close()


def test_a_vector_cut_short_is_dropped_with_its_items_rows_at_open(tmp_path: Path) -> None:
    """A text's vector of the wrong length (a damaged page) is never scanned: at the next open it goes
    with every row of the item naming it, so that item is embedded again (its other text is still
    known: only the damaged one is sent); the other items stay as they were."""
    path = tmp_path / "v.sqlite3"
    store = VectorStore(path)
    store.open()
    x, y, z = text_digest("x"), text_digest("y"), text_digest("z")
    store.add(
        "m",
        2,
        [
            VectorRow("a", "0", 0, 1, 2, [1.0, 0.0], (0, 1), x),
            VectorRow("a", "0", 1, 1, 2, [0.6, 0.8], (2, 3), z),
            VectorRow("a", "1", 0, 1, 2, [0.0, 1.0], (0, 1), y),
        ],
    )
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE texts SET vec = x'0000803f' WHERE digest = ?", (x,))
    conn.commit()
    conn.close()
    store.open()
    assert store.done("m", 2) == {"a": {"1"}}
    assert store.known("m", 2, "a", [("0", 0, (0, 1), x), ("0", 1, (2, 3), z), ("1", 0, (0, 1), y)]) == {y, z}
    assert [hit.item for hit in store.nearest("m", [1.0, 0.0], journals=None, limit=5)] == ["1"]
    store.close()
