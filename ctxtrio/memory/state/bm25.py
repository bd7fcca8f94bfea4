"""An in-memory BM25 index over one session's entries (pure, no trio).

Why not the store's FTS5 index: SQLite's ``bm25()`` cost about 5 µs per matching row
here, so a three-word query matching 2,000 of 10,000 entries took 10-20 ms. Here the
postings of a loaded session live in memory and a query costs well under a microsecond
per posting (~1 ms for that query). It is derived state like the rest of
:class:`~ctxtrio.memory.state.columns.SessionState`, rebuilt from the journal or loaded from
the session's snapshot (:mod:`.snapshot`); the statistics are per session.

Memory is flat arrays, not objects: entries are ordinals (their position in the
session), terms are small integer ids, and each term's postings are two ``array``s
(ordinals, term frequencies), about 6 bytes per (entry, distinct term).

Scoring is FTS5's: BM25 with k1 1.2 and b 0.75, ``idf = ln((N - df + 0.5) / (df + 0.5))``
floored at 1e-6, where N, df and the average length count live entries only (a
superseded entry neither matches nor skews the statistics). Terms come from
:func:`ctxtrio.text.terms.terms`, as for indexing and queries everywhere.
"""

from __future__ import annotations

import math
import sys
from array import array
from bisect import bisect_left
from collections import Counter
from itertools import accumulate
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

__all__ = ["B", "K1", "TermIndex"]

K1: Final = 1.2
B: Final = 0.75
_IDF_FLOOR: Final = 1e-6
#: Term frequencies are stored in 16 bits (BM25 saturates long before).
_MAX_TF: Final = 65_535


class TermIndex:
    """Postings (ordinal, tf) per term id, df per term over live entries, live statistics.

    Postings loaded from a snapshot stay in its flat arrays (``_base``: one run per term,
    read through zero-copy memoryview slices); postings added since go to per-term
    arrays (``_added``). A term's postings are its base run, then what was added.
    Likewise the loaded vocabulary stays one UTF-8 buffer searched by bisection
    (``_vocabulary``); terms seen since are in a dict.
    """

    __slots__ = ("_added", "_base", "_ids", "_new_terms", "_vocabulary", "df", "live_docs", "live_length")

    def __init__(self) -> None:
        #: (UTF-8 of the loaded terms one after another, where each starts, term ids in term order).
        self._vocabulary: tuple[memoryview | bytes, array[int], array[int]] = (b"", array("q", [0]), array("i"))
        #: Terms added or looked up since: term -> id (ids of new terms follow the loaded ones).
        self._ids: dict[str, int] = {}
        self._new_terms: list[str] = []
        #: Per term id: live entries holding it.
        self.df: array[int] = array("q")
        #: (starts per term id, ordinals, tfs) of the postings loaded from a snapshot.
        self._base: tuple[array[int], memoryview, memoryview] = (array("q", [0]), memoryview(b""), memoryview(b""))
        #: Term id -> (ordinals, tfs) added since.
        self._added: dict[int, tuple[array[int], array[int]]] = {}
        self.live_docs = 0
        self.live_length = 0

    def __len__(self) -> int:
        """How many distinct terms the index knows."""
        return len(self.df)

    def term_id(self, term: str) -> int | None:
        found = self._ids.get(term)
        if found is not None:
            return found
        text, starts, order = self._vocabulary
        if not order:
            return None
        key = term.encode("utf-8")
        position = bisect_left(order, key, key=lambda term_id: bytes(text[starts[term_id] : starts[term_id + 1]]))
        if position < len(order):
            term_id = order[position]
            if text[starts[term_id] : starts[term_id + 1]] == key:
                self._ids[sys.intern(term)] = term_id  # a term asked for once is often asked again
                return term_id
        return None

    def add(self, ordinal: int, terms: Iterable[str]) -> tuple[list[int], int]:
        """Index entry ``ordinal`` (not yet live): its distinct term ids and its length in terms."""
        counts = Counter(terms)
        added = self._added
        distinct: list[int] = []
        for term, tf in counts.items():
            term_id = self.term_id(term)
            if term_id is None:
                term_id = self._ids[sys.intern(term)] = len(self.df)
                self._new_terms.append(term)
                self.df.append(0)
            found = added.get(term_id)
            if found is None:
                found = added[term_id] = (array("i"), array("H"))
            found[0].append(ordinal)
            found[1].append(tf if tf < _MAX_TF else _MAX_TF)
            distinct.append(term_id)
        return distinct, counts.total()

    def account(self, term_ids: Iterable[int], length: int, sign: int) -> None:
        """Count an entry in (``sign`` 1) or out of (-1) the live statistics."""
        df = self.df
        for term_id in term_ids:
            df[term_id] += sign
        self.live_docs += sign
        self.live_length += sign * length

    def postings(self, term_id: int) -> Iterator[tuple[int, int]]:
        """(ordinal, tf) of every entry holding the term, in the order they were added."""
        starts, ordinals, tfs = self._base
        if term_id + 1 < len(starts):
            start, end = starts[term_id], starts[term_id + 1]
            yield from zip(ordinals[start:end], tfs[start:end])
        found = self._added.get(term_id)
        if found is not None:
            yield from zip(found[0], found[1])

    def holding(self, query_terms: Iterable[str], among: Sequence[int]) -> dict[int, int]:
        """How many of ``query_terms`` (each once) every entry with ``among[ordinal]`` true holds, if any:
        unlike :meth:`scores`, for entries out of the live statistics (a folded entry's words may be in
        no live one)."""
        held: dict[int, int] = {}
        for term in dict.fromkeys(query_terms):
            term_id = self.term_id(term)
            if term_id is not None:
                for ordinal, _ in self.postings(term_id):
                    if among[ordinal]:
                        held[ordinal] = held.get(ordinal, 0) + 1
        return held

    def count(self, term: str) -> int:
        """How many live entries hold ``term``."""
        term_id = self.term_id(term)
        return 0 if term_id is None else self.df[term_id]

    def scores(
        self,
        query_terms: Iterable[str],
        live: Sequence[int],
        lengths: Sequence[int],
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]:
        """BM25 of every live entry (``live[ordinal]`` true) matching any of ``query_terms`` (each once),
        a term's share times its ``weights`` (1 for a term it lacks; query expansion's, :mod:`..expansion`)."""
        docs = self.live_docs
        if docs <= 0:
            return {}
        average = self.live_length / docs if self.live_length else 1.0
        base = K1 * (1.0 - B)
        per_length = K1 * B / average
        acc: dict[int, float] = {}
        get = acc.get
        for term in dict.fromkeys(query_terms):
            term_id = self.term_id(term)
            if term_id is None:
                continue
            df = self.df[term_id]
            if df <= 0:
                continue
            idf = math.log((docs - df + 0.5) / (df + 0.5))
            weight = (idf if idf > _IDF_FLOOR else _IDF_FLOOR) * (K1 + 1.0)
            if weights is not None:
                weight *= weights.get(term, 1.0)
            for ordinal, tf in self.postings(term_id):
                if live[ordinal]:
                    acc[ordinal] = get(ordinal, 0.0) + weight * tf / (tf + base + per_length * lengths[ordinal])
        return acc

    # -- snapshots ------------------------------------------------------------------

    def dump(self) -> tuple[bytes, array[int], array[int], array[int], array[int], array[int], array[int]]:
        """The flat form a snapshot stores: (vocabulary UTF-8, term starts, term order, df, postings
        per term, all ordinals, all tfs)."""
        text, starts, _ = self._vocabulary
        loaded = len(starts) - 1
        terms = [str(text[starts[n] : starts[n + 1]], "utf-8") for n in range(loaded)] + self._new_terms
        encoded = [term.encode("utf-8") for term in terms]
        term_starts = array("q", [0])
        term_starts.extend(accumulate(len(term) for term in encoded))
        order = array("i", sorted(range(len(terms)), key=encoded.__getitem__))
        base_starts, base_ordinals, base_tfs = self._base
        counts = array("q")
        ordinals = array("i")
        tfs = array("H")
        for term_id in range(len(self.df)):
            before = len(ordinals)
            if term_id + 1 < len(base_starts):
                ordinals.extend(base_ordinals[base_starts[term_id] : base_starts[term_id + 1]])
                tfs.extend(base_tfs[base_starts[term_id] : base_starts[term_id + 1]])
            found = self._added.get(term_id)
            if found is not None:
                ordinals.extend(found[0])
                tfs.extend(found[1])
            counts.append(len(ordinals) - before)
        return b"".join(encoded), term_starts, order, self.df, counts, ordinals, tfs

    @classmethod
    def load(
        cls,
        vocabulary: tuple[memoryview, array[int], array[int]],
        df: array[int],
        counts: array[int],
        ordinals: array[int],
        tfs: array[int],
        live_docs: int,
        live_length: int,
    ) -> TermIndex:
        """The index :meth:`dump` described (the caller checked the sizes agree)."""
        index = cls()
        index._vocabulary = vocabulary
        index.df = df
        starts = array("q", [0])
        starts.extend(accumulate(counts))
        index._base = (starts, memoryview(ordinals), memoryview(tfs))
        index.live_docs = live_docs
        index.live_length = live_length
        return index
