"""Keeping a vectors file in step with the journals and bounded: which rows and texts go.

SQL on an open connection (``vector_schema.connect``), each call one write transaction;
:class:`~.vectors.VectorStore` calls them under its lock and turns ``sqlite3.Error`` into
``StoreError``. The layout they work on is ``vector_schema.py``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import vector_schema as schema

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Collection

__all__ = ["drop_journals", "drop_rows", "evict_unnamed", "forget_refused", "spare_texts"]


def drop_rows(
    conn: sqlite3.Connection,
    model: str,
    dim: int | None,
    journals: Collection[str],
    forgotten: Callable[[str], bool] | None,
    *,
    maybe_legacy: bool,
) -> int | None:
    """Delete every row not of (``model``, ``dim``) or of a journal outside ``journals``; rows deleted,
    None when there was nothing to delete (see :meth:`VectorStore.drop_except <.vectors.VectorStore.drop_except>`).
    ``maybe_legacy``: the file may still hold an older layout's rows (``vector_schema.py``)."""
    other = "model != ?" if dim is None else "NOT (model = ? AND dim = ?)"
    args: tuple[object, ...] = (model,) if dim is None else (model, dim)
    found = conn.execute("SELECT DISTINCT model, dim, journal FROM rows").fetchall()
    gone = [(m, d, j) for m, d, j in found if m != model or (dim is not None and d != dim) or j not in journals]
    foreign = conn.execute(f"SELECT 1 FROM texts WHERE {other} LIMIT 1", args).fetchone()
    if not gone and foreign is None:
        return None
    deleted = 0
    erased: dict[tuple[str, int], set[bytes]] = {}
    with schema.transaction(conn):
        legacy = maybe_legacy and schema.has_legacy(conn)
        for key in gone:
            if forgotten is not None and forgotten(key[2]):
                erased.setdefault((key[0], key[1]), set()).update(schema.digests_of(conn, *key))
                if legacy:
                    conn.execute("DELETE FROM legacy WHERE journal=?", (key[2],))
            deleted += conn.execute("DELETE FROM rows WHERE model=? AND dim=? AND journal=?", key).rowcount
        for (erased_model, erased_dim), digests in erased.items():
            schema.delete_unnamed(conn, erased_model, erased_dim, digests)
        conn.execute(f"DELETE FROM texts WHERE {other}", args)
        if legacy:
            conn.execute(f"DELETE FROM legacy WHERE {other}", args)
    return deleted


def drop_journals(
    conn: sqlite3.Connection,
    model: str,
    dim: int,
    journals: Collection[str],
    forgotten: Callable[[str], bool],
    *,
    maybe_legacy: bool,
) -> int:
    """Delete the rows of (``model``, ``dim``) of ``journals``, reading no other: each journal's rows are its
    key's prefix, and whether a ``forgotten`` journal's text is named elsewhere is a lookup (``rows_digest``).
    Texts only a forgotten journal's rows named go with them, and an older file's rows of it, as in
    :func:`drop_rows`; rows deleted. (:func:`drop_rows` reads every row to find the journals gone.)"""
    deleted = 0
    erased: set[bytes] = set()
    with schema.transaction(conn):
        legacy = maybe_legacy and schema.has_legacy(conn)
        for journal in journals:
            if forgotten(journal):
                erased |= schema.digests_of(conn, model, dim, journal)
                if legacy:
                    conn.execute("DELETE FROM legacy WHERE journal=?", (journal,))
            key = (model, dim, journal)
            deleted += conn.execute("DELETE FROM rows WHERE model=? AND dim=? AND journal=?", key).rowcount
        schema.delete_unnamed(conn, model, dim, erased)
    return deleted


def spare_texts(conn: sqlite3.Connection, model: str, dim: int, *, spare_min: int, spare_share: int) -> list[bytes]:
    """The texts of (``model``, ``dim``) no row names beyond the ``spare_min`` (or one per ``spare_share`` named)
    most recently named: what :func:`evict_unnamed` deletes. Two scans of every row and text (17-35 s under load
    at 600,000 rows, ``stress/busy_search.py``), so read in one snapshot on a connection of its own, with no lock:
    stores meanwhile do not wait for it, and :func:`evict_unnamed` keeps a text a row named since."""
    conn.execute("BEGIN")  # (one snapshot for both scans: WAL, so writers go on)
    try:
        named = int(
            conn.execute(
                "SELECT count(DISTINCT digest) FROM rows WHERE model=? AND dim=? AND digest IS NOT NULL", (model, dim)
            ).fetchone()[0]
        )
        return schema.unnamed_texts(conn, model, dim)[max(spare_min, named // spare_share) :]
    finally:
        if conn.in_transaction:  # (read only: nothing to keep)
            conn.execute("ROLLBACK")


def evict_unnamed(conn: sqlite3.Connection, model: str, dim: int, digests: list[bytes], *, legacy: bool) -> int:
    """Delete the texts ``digests`` of (``model``, ``dim``) that no row names now, in one write transaction (a
    lookup each); texts deleted. A row another server stored since :func:`spare_texts` read keeps its text: it is
    asked under the write lock, so no row is left naming a text gone. ``legacy``: also drop an older layout's
    rows no part took."""
    with schema.transaction(conn):
        evicted = 0
        for digest in digests:
            evicted += conn.execute(
                "DELETE FROM texts WHERE model=? AND dim=? AND digest=? AND NOT EXISTS "
                "(SELECT 1 FROM rows WHERE model=? AND dim=? AND digest=?)",
                (model, dim, digest, model, dim, digest),
            ).rowcount
        if legacy:
            conn.execute("DROP TABLE IF EXISTS legacy")
    return evicted


def forget_refused(conn: sqlite3.Connection, model: str) -> tuple[int, int]:
    """Delete every row of ``model``'s items marked refused (a part -1 row), the parts taken with them (they
    would count the item as done), not their texts; counted in ``meta`` (:func:`~.vector_schema.count_forget`)
    when there were any. (Items forgotten, rows deleted.)"""
    with schema.transaction(conn):
        marks = int(conn.execute("SELECT count(*) FROM rows WHERE model=? AND part < 0", (model,)).fetchone()[0])
        deleted = conn.execute(
            "DELETE FROM rows WHERE model=? AND (journal, item) IN "
            "(SELECT journal, item FROM rows WHERE model=? AND part < 0)",
            (model, model),
        ).rowcount
        if marks:
            schema.count_forget(conn)
    return marks, deleted
