"""What the search index is asked: SQL that only reads, on one connection.

A search's levels of BM25 matches, the rows holding each word, and what the index holds
of each journal. :class:`~.index.SearchIndex` owns the connections, checks the file is
still the one it opened and translates ``sqlite3.Error``; these functions raise it as
is. The SQL that writes rows is in :mod:`.index_tables`.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from .rows import Hit

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .rows import Level, Table

__all__ = ["HEADING_WEIGHT", "doc_counts", "inventory", "search_levels"]

#: BM25 weight of the ``heading`` column against the text's (1.0): FTS5 sums each column's
#: BM25, so a word the trail holds counts once more, scaled by this.
HEADING_WEIGHT = 1.0
#: Terms counted in one statement (:func:`doc_counts`), well below SQLite's limit of parameters.
_COUNTED_AT_ONCE = 200


def search_levels(
    conn: sqlite3.Connection, table: Table, levels: Sequence[Level], *, journals: Sequence[str] | None, limit: int
) -> list[Hit]:
    """Up to ``limit`` rows of ``table`` matching ``levels`` asked in turn (:func:`~.rows.fts_levels`), each
    level ranked by BM25, optionally within ``journals`` (not empty)."""
    rank = f"bm25({table}, 1.0, {HEADING_WEIGHT})"
    sql = f"SELECT rowid, journal, item, {rank}, line_start, line_end FROM {table} WHERE {table} MATCH ?"
    listed: Sequence[str] = journals or ()
    if journals is not None and len(journals) + 2 > conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER):
        _searched_journals(conn, journals)
        sql += " AND journal IN (SELECT name FROM temp.searched_journals)"
        listed = ()
    elif journals is not None:
        sql += f" AND journal IN ({','.join('?' * len(journals))})"
    sql += f" ORDER BY {rank} LIMIT ?"
    found: dict[int, Hit] = {}
    for level in levels:
        if level.only_if_none and found:
            break
        params: list[str | int] = [level.expression, *listed, limit]
        for rowid, j, i, s, a, b in conn.execute(sql, params).fetchall():
            if rowid not in found and len(found) < limit:
                found[rowid] = Hit(str(j), str(i), -float(s), int(a or 0), int(b or 0))
        if len(found) >= limit:
            break
    return list(found.values())


def _searched_journals(conn: sqlite3.Connection, journals: Sequence[str]) -> None:
    """Put ``journals`` in this connection's TEMP table ``searched_journals``, for a search within more journals
    than a statement may have parameters (SQLite's limit: 32,766 by default, 250,000 in Debian's build)."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS searched_journals (name TEXT PRIMARY KEY) WITHOUT ROWID")
    own = not conn.in_transaction  # the index's readers autocommit: one transaction for the list, not one a row
    if own:
        conn.execute("BEGIN")
    try:
        conn.execute("DELETE FROM temp.searched_journals")
        conn.executemany("INSERT OR IGNORE INTO temp.searched_journals VALUES (?)", ((name,) for name in journals))
    except sqlite3.Error:
        if own:
            conn.execute("ROLLBACK")
        raise
    if own:
        conn.execute("COMMIT")


def doc_counts(conn: sqlite3.Connection, table: Table, terms: Sequence[str]) -> dict[str, int]:
    """How many rows of ``table`` hold each of ``terms``, by FTS5's vocabulary of the table: the terms
    looked up in a TEMP ``fts5vocab`` table of this connection, up to :data:`_COUNTED_AT_ONCE` in one
    statement (a search counts its words' other forms too: ~20 words, 0.46 ms one statement each
    against 0.28 ms together over python3.11-doc)."""
    vocab = f"temp.{table}_vocab"
    unique = list(dict.fromkeys(terms))
    counts = dict.fromkeys(unique, 0)
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocab} USING fts5vocab(main, '{table}', 'row')")
    for start in range(0, len(unique), _COUNTED_AT_ONCE):
        some = unique[start : start + _COUNTED_AT_ONCE]
        sql = f"SELECT term, doc FROM {vocab} WHERE term IN ({','.join('?' * len(some))})"
        counts.update((str(term), int(doc)) for term, doc in conn.execute(sql, some))
    return counts


def journal_names(conn: sqlite3.Connection) -> list[str]:
    """Every journal the index holds a watermark of (its rows go with it), without counting rows."""
    return [str(name) for (name,) in conn.execute("SELECT name FROM journals")]


def inventory(conn: sqlite3.Connection) -> dict[str, tuple[int, int]]:
    """Journal name -> (indexed offset, chunk rows), for every journal the index knows."""
    marks = {str(n): int(o) for n, o in conn.execute("SELECT name, indexed_offset FROM journals")}
    rows = {str(j): int(c) for j, c in conn.execute("SELECT journal, count(*) FROM chunks GROUP BY journal")}
    return {name: (marks.get(name, 0), rows.get(name, 0)) for name in marks.keys() | rows.keys()}
