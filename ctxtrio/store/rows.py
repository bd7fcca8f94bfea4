"""What the search index stores and returns, in the store's own terms (no record schema).

A domain decides what its records contribute (a :data:`RowsFor` function, e.g.
:func:`ctxtrio.docs.chunks.chunk_rows`); the index (:mod:`.index`) stores the rows and
answers :class:`Hit` s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from .records import Record

__all__ = ["Hit", "IndexRow", "RowsFor", "Table", "fts_query", "no_rows"]

Table = Literal["chunks"]


@dataclass(frozen=True, slots=True)
class IndexRow:
    """One searchable item: its table, its key within the journal, and its terms."""

    table: Table
    item: str
    terms: str


@dataclass(frozen=True, slots=True)
class Hit:
    """A search match. ``score`` is BM25 (k1 1.2, b 0.75), higher is better."""

    journal: str
    item: str
    score: float
    #: Byte range of the record's line in the journal (read it alone instead of the file).
    line_start: int = 0
    line_end: int = 0


#: What one journal record contributes to the index, decided by the domain that wrote it.
RowsFor = Callable[[Record], list[IndexRow]]


def no_rows(record: Record) -> list[IndexRow]:
    """Index nothing (a store whose journals hold nothing searchable)."""
    return []


def fts_query(query_terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression that ORs the quoted terms, or None when there are none."""
    unique = list(dict.fromkeys(t for t in query_terms if t))
    if not unique:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in unique)
