"""What comes into a vectors file: rows stored with their texts, and texts the file holds or an older layout gives.

SQL on an open connection (``vector_schema.connect``), each writing call one transaction;
:class:`~.vectors.VectorStore` calls them under its lock, checks the disk's room first and
turns ``sqlite3.Error`` into ``StoreError`` (``vector_upkeep.py`` is the other side: what goes).
The layout they work on is ``vector_schema.py``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import vector_schema as schema

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Collection, Sequence

__all__ = ["RowValues", "held_texts", "keep_taken", "store_rows"]

#: One row's columns after (model, dim): journal, item, part, line_start, line_end, span_start, span_end, digest.
RowValues = tuple[str, str, int, int, int, int, int, bytes | None]


def store_rows(
    conn: sqlite3.Connection, model: str, dim: int, values: Sequence[RowValues], fresh: dict[bytes, bytes], now: int
) -> tuple[list[RowValues], dict[bytes, bytes], set[tuple[str, str]]]:
    """In one transaction: the ``fresh`` texts (digest -> vector), then the rows of ``values`` whose texts the
    file holds (each text named is marked used ``now``, milliseconds). (Rows stored, digest -> vector of each
    text they name, the (journal, item) not stored because a text they name is gone: evicted meanwhile by
    another process.)"""
    with schema.transaction(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO texts VALUES (?, ?, ?, ?, ?)",
            [(model, dim, digest, blob, now) for digest, blob in fresh.items()],
        )
        blobs = dict(fresh)
        for digest in {v[7] for v in values if v[7] is not None and v[7] not in fresh}:
            key = (model, dim, digest)
            found = conn.execute("SELECT vec FROM texts WHERE model=? AND dim=? AND digest=?", key).fetchone()
            if found is not None and len(found[0]) == 4 * dim:
                conn.execute("UPDATE texts SET used=? WHERE model=? AND dim=? AND digest=?", (now, *key))
                blobs[digest] = bytes(found[0])
        lost = {(v[0], v[1]) for v in values if v[7] is not None and v[7] not in blobs}
        kept = [v for v in values if (v[0], v[1]) not in lost]
        conn.executemany(
            "INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(model, dim, *v) for v in kept],
        )
    return kept, blobs, lost


def held_texts(conn: sqlite3.Connection, model: str, dim: int, digests: Collection[bytes]) -> set[bytes]:
    """Of ``digests``, those whose vector the file holds, of the right length: a vector cut short in
    the file is embedded again, not scanned."""
    held: set[bytes] = set()
    for digest in set(digests):
        if conn.execute(
            "SELECT 1 FROM texts WHERE model=? AND dim=? AND digest=? AND length(vec)=?",
            (model, dim, digest, 4 * dim),
        ).fetchone():
            held.add(digest)
    return held


def keep_taken(
    conn: sqlite3.Connection,
    model: str,
    dim: int,
    journal: str,
    taken: dict[bytes, bytes],
    items: Collection[str],
    now: int,
) -> None:
    """In one transaction: the texts ``taken`` from an older layout's rows (``vector_schema.legacy_vectors``)
    become texts, and the older rows of ``items`` of ``journal`` go (taken, or of no use)."""
    with schema.transaction(conn):
        conn.executemany(
            "INSERT OR IGNORE INTO texts VALUES (?, ?, ?, ?, ?)",
            [(model, dim, digest, blob, now) for digest, blob in taken.items()],
        )
        conn.executemany(
            "DELETE FROM legacy WHERE model=? AND dim=? AND journal=? AND item=?",
            [(model, dim, journal, item) for item in items],
        )
