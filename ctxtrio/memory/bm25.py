"""An in-memory BM25 index over one session's entries (pure, no trio).

Why not the store's FTS5 index: SQLite's ``bm25()`` cost about 5 µs per matching row
here, so a three-word query matching 2,000 of 10,000 entries took 10-20 ms. Here the
postings of a loaded session live in memory and a query costs well under a microsecond
per posting (~1 ms for that query). It is derived state like the rest of
:class:`~ctxtrio.memory.state.SessionState`, rebuilt from the journal on load; the
statistics are per session, not across all sessions as one FTS5 table would make them.

Scoring is FTS5's: BM25 with k1 1.2 and b 0.75, ``idf = ln((N - df + 0.5) / (df + 0.5))``
floored at 1e-6, where N, df and the average length count live entries only (a
superseded entry neither matches nor skews the statistics). Terms come from
:func:`ctxtrio.text.terms.terms`, as for indexing and queries everywhere.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final, Generic, Protocol, TypeVar

__all__ = ["B", "K1", "Posting", "TermIndex"]

K1: Final = 1.2
B: Final = 0.75
_IDF_FLOOR: Final = 1e-6


class Posting(Protocol):
    """What the index needs of an entry: its length in terms, whether it is live."""

    length: int
    alive: bool


D = TypeVar("D", bound=Posting)


class TermIndex(Generic[D]):
    """Postings (entry, term frequency) per term, plus live document statistics."""

    __slots__ = ("_df", "_postings", "live_docs", "live_length")

    def __init__(self) -> None:
        self._postings: dict[str, tuple[list[D], list[int]]] = {}
        self._df: dict[str, int] = {}
        self.live_docs = 0
        self.live_length = 0

    def add(self, doc: D, terms: Iterable[str]) -> tuple[str, ...]:
        """Index ``doc`` (not yet live); returns its distinct terms, shared with the index."""
        counts = Counter(terms)
        doc.length = counts.total()
        postings = self._postings
        distinct: list[str] = []
        for term, tf in counts.items():
            term = sys.intern(term)  # one string object per term, however many entries hold it
            found = postings.get(term)
            if found is None:
                found = postings[term] = ([], [])
                self._df[term] = 0
            found[0].append(doc)
            found[1].append(tf)
            distinct.append(term)
        return tuple(distinct)

    def account(self, doc: D, distinct: Sequence[str], sign: int) -> None:
        """Count ``doc`` in (``sign`` 1) or out of (-1) the live statistics."""
        df = self._df
        for term in distinct:
            df[term] += sign
        self.live_docs += sign
        self.live_length += sign * doc.length

    def scores(self, query_terms: Iterable[str]) -> dict[D, float]:
        """BM25 of every live entry matching any of ``query_terms`` (each counted once)."""
        docs = self.live_docs
        if docs <= 0:
            return {}
        average = self.live_length / docs if self.live_length else 1.0
        base = K1 * (1.0 - B)
        per_length = K1 * B / average
        acc: dict[D, float] = {}
        get = acc.get
        for term in dict.fromkeys(query_terms):
            found = self._postings.get(term)
            df = self._df.get(term, 0)
            if found is None or df <= 0:
                continue
            idf = math.log((docs - df + 0.5) / (df + 0.5))
            weight = (idf if idf > _IDF_FLOOR else _IDF_FLOOR) * (K1 + 1.0)
            for doc, tf in zip(found[0], found[1]):
                if doc.alive:
                    acc[doc] = get(doc, 0.0) + weight * tf / (tf + base + per_length * doc.length)
        return acc
