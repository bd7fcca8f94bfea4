"""VectorStore.drop_journals: the rows of documents replaced or forgotten during a pass go by their journal,
reading no other row, and a search's matrix loses them in memory instead of being read again."""

from __future__ import annotations

import math
import sqlite3
from typing import TYPE_CHECKING

import pytest

from ctxtrio.store import vector_matrix, vector_schema
from ctxtrio.store.vector_schema import text_digest
from ctxtrio.store.vectors import VectorRow, VectorStore

if TYPE_CHECKING:
    from pathlib import Path


def _rows(journal: str, texts: list[str], dim: int = 2) -> list[VectorRow]:
    """One row a text, item n holding text n, its vector at an angle of its own (normalised)."""
    turn = sum(map(ord, journal)) % 7
    return [
        VectorRow(journal, str(n), 0, n, n + 1, [math.cos(n + turn), math.sin(n + turn)], (0, len(text)),
                  text_digest(text))
        for n, text in enumerate(texts)
    ]  # fmt: skip


def _texts(path: Path) -> set[bytes]:
    conn = sqlite3.connect(path)
    try:
        return {bytes(d) for (d,) in conn.execute("SELECT digest FROM texts")}
    finally:
        conn.close()


@pytest.mark.parametrize("indexed", [True, False])
def test_a_forgotten_journals_texts_go_unless_another_row_names_them(tmp_path: Path, indexed: bool) -> None:
    """Forgotten: its rows go, its own texts too, a text another journal names stays; replaced: rows go, texts
    stay (for the new generation); other journals' rows are untouched. The same without the rows_digest index
    (a disk too full to make it at open): one scan of the rows instead of a lookup a text."""
    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    if not indexed:
        with store._db("test") as conn:
            conn.execute("DROP INDEX rows_digest")
    store.add("m", 2, _rows("docs/a/1.jsonl", ["shared", "own a"]))
    store.add("m", 2, _rows("docs/b/1.jsonl", ["shared", "own b"]))
    store.add("m", 2, _rows("docs/c/1.jsonl", ["own c"]))
    deleted = store.drop_journals(
        "m", 2, ["docs/a/1.jsonl", "docs/c/1.jsonl"], forgotten=lambda journal: journal.startswith("docs/a/")
    )
    assert deleted == 3
    assert set(store.done("m", 2)) == {"docs/b/1.jsonl"}
    kept = _texts(store.path)
    assert text_digest("shared") in kept and text_digest("own b") in kept and text_digest("own c") in kept
    assert text_digest("own a") not in kept
    store.close()


def test_whether_a_text_is_named_is_a_lookup_not_a_scan(tmp_path: Path) -> None:
    """delete_unnamed asks the rows_digest index, made at open on a file without it (an older tree's), for
    each text: no scan of every row (a forget during a backfill of 600,000 rows read them all)."""
    path = tmp_path / "v.sqlite3"
    conn = vector_schema.connect(path)
    conn.execute("DROP INDEX rows_digest")  # (as a file an older tree made)
    conn.close()
    conn = vector_schema.connect(path)
    said: list[str] = []
    conn.set_trace_callback(said.append)
    with vector_schema.transaction(conn):
        vector_schema.delete_unnamed(conn, "m", 2, {b"x" * 16})
    conn.set_trace_callback(None)
    (query,) = [sql for sql in said if sql.lstrip().upper().startswith("SELECT") and "FROM rows" in sql]
    plan = " ".join(str(step[3]) for step in conn.execute(f"EXPLAIN QUERY PLAN {query}"))
    assert "INDEX rows_digest (model=? AND dim=? AND digest=?)" in plan, plan
    conn.close()


def test_a_search_after_a_drop_does_not_read_the_matrix_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The matrix a search read masks the rows dropped at once and sheds them once they are a quarter of it;
    rows stored again under a dropped journal's name are found, its old ones not; the file is read once."""
    reads: list[int] = []
    read = vector_matrix.Matrix.read.__func__  # type: ignore[attr-defined]  # (the classmethod's function)

    def counted(cls: type[vector_matrix.Matrix], *args: object) -> vector_matrix.Matrix:
        reads.append(1)
        return read(cls, *args)  # type: ignore[no-any-return]

    monkeypatch.setattr(vector_matrix.Matrix, "read", classmethod(counted))
    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    journals = [f"docs/d{n}/1.jsonl" for n in range(10)]
    for journal in journals:
        store.add("m", 2, _rows(journal, [f"{journal} {n}" for n in range(4)]))
    found = {hit.journal for hit in store.nearest("m", [1.0, 0.0], journals=None, limit=40)}
    assert found == set(journals)
    store.drop_journals("m", 2, journals[:2], forgotten=lambda _journal: False)  # 8 of 40 rows: masked
    matrix = store._memory.get("m", 2)
    assert matrix is not None and matrix.dropped == 8 and len(matrix.keys) == 40
    assert {hit.journal for hit in store.nearest("m", [1.0, 0.0], journals=None, limit=40)} == set(journals[2:])
    store.add("m", 2, _rows(journals[0], ["again"]))  # a name dropped, stored again: a new id
    store.drop_journals("m", 2, journals[2:4], forgotten=lambda _journal: False)  # 16 of 41: shed
    assert matrix.dropped == 0 and len(matrix.keys) == 41 - 16
    hits = store.nearest("m", [1.0, 0.0], journals=None, limit=40)
    assert {hit.journal for hit in hits} == {journals[0], *journals[4:]}
    assert [hit.item for hit in hits if hit.journal == journals[0]] == ["0"] and len(hits) == 1 + 6 * 4
    assert store.nearest("m", [1.0, 0.0], journals=[journals[1]], limit=5) == []
    assert len(reads) == 1
    store.close()


def test_a_batch_stored_into_a_loaded_matrix_copies_no_row_while_there_is_room(tmp_path: Path) -> None:
    """VectorStore.add extends the matrix a search read in place: the rows held are not copied for each batch
    (they were: 39 ms at 41,000 x 384, 432 ms at 200,000, the store's lock held), only when the room is full
    (GROWTH: a quarter more), and every row stored is found."""
    import numpy as np

    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    store.add("m", 2, _rows("docs/a/1.jsonl", [f"a {n}" for n in range(100)]))
    store.nearest("m", [1.0, 0.0], journals=None, limit=1)
    matrix = store._memory.get("m", 2)
    assert matrix is not None
    store.add("m", 2, _rows("docs/b/1.jsonl", ["b 0"]))  # full: grown once, by a quarter
    grown = matrix.rows
    assert matrix.nbytes == 125 * 2 * 4
    for n in range(1, 25):
        store.add("m", 2, _rows(f"docs/c{n}/1.jsonl", [f"c {n}"]))
        assert np.shares_memory(matrix.rows, grown) and len(matrix.rows) == 101 + n
    assert len({hit.journal for hit in store.nearest("m", [1.0, 0.0], journals=None, limit=200)}) == 2 + 24
    store.close()


def test_a_drop_by_journal_on_a_full_disk_fails_whole_or_succeeds_and_the_file_stays_whole(tmp_path: Path) -> None:
    """drop_journals on a disk filled to the last byte (a 4 MB tmpfs, root only): it deletes the journal's rows
    and a forgotten one's texts in one transaction, or raises DiskFullError (the embedder waits for room, then
    its next pass reads every row) and deletes nothing; once there is room, it finishes; the file is whole."""
    from ctxtrio.store.reading import DiskFullError
    from testkit.disk import fill_disk
    from tests.store.test_disk_full import small_tmpfs

    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        store = VectorStore(mount / "v.sqlite3")
        store.open()
        for n in range(20):
            store.add("m", 2, _rows(f"docs/d{n}/1.jsonl", [f"d{n} text {k}" for k in range(20)]))
        fill_disk(mount / "filler")
        victims = [f"docs/d{n}/1.jsonl" for n in range(10)]
        try:
            store.drop_journals("m", 2, victims, forgotten=lambda journal: journal.endswith("1.jsonl"))
        except DiskFullError:
            assert set(store.done("m", 2)) >= set(victims)  # nothing deleted
            (mount / "filler").unlink()
            store.drop_journals("m", 2, victims, forgotten=lambda journal: journal.endswith("1.jsonl"))
        assert not set(store.done("m", 2)) & set(victims)
        assert text_digest("d0 text 0") not in _texts(store.path) and text_digest("d19 text 0") in _texts(store.path)
        store.close()
        conn = sqlite3.connect(mount / "v.sqlite3")
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()
