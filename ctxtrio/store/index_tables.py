"""The search index's tables and the SQL that reads and writes their rows on one
connection: the schema and its version, each journal's watermark, inserting a journal's
rows with their rowid ranges and forgetting them by those ranges.

:class:`~.index.SearchIndex` owns the connections, the transactions and healing; these
functions run inside its transactions.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from .rows import IndexRow, Table

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "TOKENIZER",
    "ensure_schema",
    "forget_rows",
    "insert_rows",
    "set_watermark",
    "watermark",
]

log = logging.getLogger("ctxtrio.store")

_TABLES: tuple[Table, ...] = ("chunks",)
TOKENIZER = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS journals (name TEXT PRIMARY KEY, indexed_offset INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5(
    terms, heading, journal UNINDEXED, item UNINDEXED, line_start UNINDEXED, line_end UNINDEXED, tokenize="{TOKENIZER}"
);
CREATE TABLE IF NOT EXISTS ranges (journal TEXT NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS ranges_by_journal ON ranges(journal);
"""
#: Fills ``ranges`` for the rows of an index of schema 3 (one pass over the rows, no tokenizing).
_RANGES_OF_ROWS = "INSERT INTO ranges SELECT journal, min(rowid), max(rowid) FROM chunks GROUP BY journal"
#: ``PRAGMA user_version`` of the schema above. An index of another version is emptied
#: and re-indexed from the journals when opened (it is derived data).
#: 2: chunk rows carry the byte range of their journal line (``line_start``, ``line_end``).
#: 3: a chunk's heading trail is indexed in its own column (``heading``).
#: 4: the rowids of each journal's rows (``ranges``): forgetting a journal deletes its rows by
#: rowid, where ``journal = ?`` on the UNINDEXED column read every row of the index (~40 ms
#: CPU per removed generation over the stdlib's 28,000 rows, ~1 ms by rowid). An index of
#: schema 3 gains the table (filled from its rows) and keeps its rows.
SCHEMA_VERSION = 4


def watermark(conn: sqlite3.Connection, journal: str) -> int:
    row = conn.execute("SELECT indexed_offset FROM journals WHERE name = ?", (journal,)).fetchone()
    return int(row[0]) if row else 0


def set_watermark(conn: sqlite3.Connection, journal: str, offset: int) -> None:
    conn.execute(
        "INSERT INTO journals(name, indexed_offset) VALUES(?, ?) "
        "ON CONFLICT(name) DO UPDATE SET indexed_offset = excluded.indexed_offset",
        (journal, offset),
    )


def forget_rows(conn: sqlite3.Connection, journal: str) -> None:
    """Delete ``journal``'s rows by their rowid ranges, and its ranges and watermark."""
    ranges = conn.execute("SELECT first, last FROM ranges WHERE journal = ?", (journal,)).fetchall()
    for table in _TABLES:
        for first, last in ranges:
            conn.execute(f"DELETE FROM {table} WHERE rowid BETWEEN ? AND ? AND journal = ?", (first, last, journal))
    conn.execute("DELETE FROM ranges WHERE journal = ?", (journal,))
    conn.execute("DELETE FROM journals WHERE name = ?", (journal,))


def insert_rows(conn: sqlite3.Connection, journal: str, rows: Sequence[tuple[IndexRow, int, int]]) -> int:
    """Insert rows, each with the byte range of the journal line it came from, and note their rowids.

    FTS5 gives each new row the largest rowid + 1 (its content table's rule), so the rows
    of one ``executemany`` under the write lock are the last ``len(values)`` rowids.
    """
    for table in _TABLES:
        values = [
            (row.terms, row.heading, journal, row.item, start, end) for row, start, end in rows if row.table == table
        ]
        if values:
            conn.executemany(
                f"INSERT INTO {table}(terms, heading, journal, item, line_start, line_end) VALUES(?, ?, ?, ?, ?, ?)",
                values,
            )
            (last,) = conn.execute("SELECT last_insert_rowid()").fetchone()
            conn.execute("INSERT INTO ranges VALUES(?, ?, ?)", (journal, last - len(values) + 1, last))
    return len(rows)


def ensure_schema(conn: sqlite3.Connection) -> bool:
    """Create the schema, or replace one of another version; True if rows were dropped.

    Under the write lock, so of several processes opening an old index one upgrades it.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        known = conn.execute("SELECT count(*) FROM sqlite_master WHERE name IN ('chunks', 'journals')").fetchone()[0]
        ranged = version == 3 and bool(known)  # its rows stay: only their ranges are missing
        dropped = bool(known) and version != SCHEMA_VERSION and not ranged
        if dropped:
            log.info("search index schema %d -> %d: re-indexing from the journals", version, SCHEMA_VERSION)
            conn.execute("DROP TABLE IF EXISTS chunks")
            conn.execute("DROP TABLE IF EXISTS journals")
            conn.execute("DROP TABLE IF EXISTS ranges")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        if ranged:
            conn.execute("DELETE FROM ranges")
            conn.execute(_RANGES_OF_ROWS)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return dropped
