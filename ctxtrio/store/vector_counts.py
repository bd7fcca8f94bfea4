"""What a vectors file holds, counted: the items each journal has rows of, and how many are embedded or refused.

SQL on an open connection (``vector_schema.connect``, or ``vector_look``'s read-only one),
reading only: ``VectorStore.done``, ``counts`` and ``tally`` call them under its lock. Each
walks ``rows``' primary key (model, dim, journal, item, part) in its order, so one of a
journal reads that journal's rows alone, its key's prefix.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

__all__ = ["Tally", "done_items", "item_counts", "item_tallies"]


@dataclass(slots=True)
class Tally:
    """One journal's rows of one (model, dim): the items with rows (embedded, or refused for good), how many
    of them are refused (in whole or in part: a part -1 row), and its vectors (the parts taken)."""

    items: set[str] = field(default_factory=set)
    refused: int = 0
    vectors: int = 0

    @property
    def embedded(self) -> int:
        return len(self.items) - self.refused


def item_counts(conn: sqlite3.Connection, model: str, dim: int) -> tuple[int, int, int]:
    """(items embedded, items refused, vectors) of (``model``, ``dim``): an item with a part -1 row is refused
    (in whole, or in part: its parts taken are among the vectors). One walk of ``rows``' key in its order,
    an item a group: the count of distinct concatenated keys it replaces sorted them in two temporary trees
    (600,000 rows of 10,000 journals: 493-671 -> 362-450 ms; the store's lock, which searches wait on, is held
    that much less at every pass of the embedder)."""
    items, refused, vectors = conn.execute(
        "SELECT count(*), sum(refused), sum(parts) FROM (SELECT max(part < 0) AS refused, sum(part >= 0) AS parts "
        "FROM rows WHERE model=? AND dim=? GROUP BY journal, item)",
        (model, dim),
    ).fetchone()
    return int(items) - int(refused or 0), int(refused or 0), int(vectors or 0)


def done_items(conn: sqlite3.Connection, model: str, dim: int, journal: str | None = None) -> dict[str, set[str]]:
    """Journal -> items with rows (embedded, or refused for good) of (``model``, ``dim``), of one ``journal`` if given."""
    where, args = ("", (model, dim)) if journal is None else (" AND journal=?", (model, dim, journal))
    found: dict[str, set[str]] = {}
    for name, item in conn.execute(f"SELECT DISTINCT journal, item FROM rows WHERE model=? AND dim=?{where}", args):
        found.setdefault(str(name), set()).add(str(item))
    return found


def item_tallies(conn: sqlite3.Connection, model: str, dim: int, journal: str | None = None) -> dict[str, Tally]:
    """Journal -> its :class:`Tally` of (``model``, ``dim``), of one ``journal`` if given: what :func:`done_items`
    and :func:`item_counts` read, in one walk of the rows' key (an item a group, as item_counts groups)."""
    where, args = ("", (model, dim)) if journal is None else (" AND journal=?", (model, dim, journal))
    rows = conn.execute(
        "SELECT journal, item, max(part < 0), sum(part >= 0) FROM rows "
        f"WHERE model=? AND dim=?{where} GROUP BY journal, item",
        args,
    )
    # In the key's order: a journal's items come together (one group each, not a dict lookup a row).
    found: dict[str, Tally] = {}
    for name, group in itertools.groupby(rows, key=operator.itemgetter(0)):
        items = list(group)
        found[str(name)] = Tally(
            {str(row[1]) for row in items}, sum(row[2] for row in items), sum(row[3] for row in items)
        )
    return found
