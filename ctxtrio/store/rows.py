"""What the search index stores and returns, in the store's own terms (no record schema).

A domain decides what its records contribute (a :data:`RowsFor` function, e.g.
:func:`ctxtrio.docs.chunks.chunk_rows`); the index (:mod:`.index`) stores the rows and
answers :class:`Hit` s.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Final, Literal

from .records import Record

if TYPE_CHECKING:
    from ..text.neighbours import SearchWord

__all__ = ["MAX_LEVEL_WORDS", "Hit", "IndexRow", "Level", "RowsFor", "Table", "fts_levels", "no_rows"]

Table = Literal["chunks"]

#: Queries of up to this many words are asked level by level: all words, all but one, ...,
#: two, any. Longer ones ask for all their words, then any. A level of k of n words names
#: every word C(n-1, k-1) times and FTS5 reads a word's row list once per mention: from
#: 6 words on, the levels between cost more than ranking every match
#: (``stress/search_words.py``: 6 words 97 ms against 59 ms at 10,000 documents).
MAX_LEVEL_WORDS: Final = 5


@dataclass(frozen=True, slots=True)
class IndexRow:
    """One searchable item: its table, its key within the journal, and its terms."""

    table: Table
    item: str
    terms: str
    #: The terms of the item's headings (a chunk's trail), a column of its own: a hit on a
    #: word only the headings hold, weighted by :data:`~.index_queries.HEADING_WEIGHT`.
    heading: str = ""


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


@dataclass(frozen=True, slots=True)
class Level:
    """One step of a search: rows holding at least ``words`` of the query's words (an FTS5 MATCH ``expression``)."""

    words: int
    expression: str
    #: Asked only when the levels before found no row at all (see :func:`fts_levels`'s ``common``).
    only_if_none: bool = False


def fts_levels(query_terms: Sequence[SearchWord], common: Collection[str] = ()) -> list[Level]:
    """The levels of a search, from every word down to any word (the last; [] for no terms).

    Why levels: a search ORs its words, and FTS5 ranks every row that holds any of them.
    Common words match tens of thousands of rows in a large store (every one ranked, 20+
    ms), yet the best hits nearly always hold several of the words. Asking first for rows
    with all of them, then all but one, and so on, ranks a few hundred rows instead; a
    level is asked only while the ones before it found too few.

    Scores stay each row's BM25 for the whole query. A level between the first and the
    last ORs every ``words``-word subset, so a row holding more words than that matches
    several subsets and FTS5's ``bm25()`` would count its words more than once; but no
    level is skipped between two that are asked, so such a row was found at its own level
    already, and a row new at this level holds exactly ``words`` words, each named once
    in the groups it matches. The first and last levels name every word once. Queries
    longer than :data:`MAX_LEVEL_WORDS` ask for those two only.

    A word given as a :class:`~ctxtrio.text.neighbours.Group` is any of its forms in every
    level (with the thesaurus's words for a word the corpus seldom says:
    :meth:`~ctxtrio.text.neighbours.Group.level_terms`), and any of its forms, neighbours or
    thesaurus words in the last (:meth:`~ctxtrio.text.neighbours.Group.last_terms`):
    rows holding the query's own words come first, and rows holding only words near them in
    meaning compete where any word would do. Each term named adds its BM25 share (a term
    named twice weighs twice).

    ``common``: words at least half of the rows hold. The last level leaves them out while
    another word remains: FTS5 gives such a word an IDF of 1e-6 (``fts5_aux.c``: a
    non-positive ``log((N - n + 0.5) / (n + 0.5))`` becomes 1e-6), so it adds nothing to a
    row's score, and naming it there only made FTS5 rank every row holding it (``test`` in
    18,006 of the stdlib's 28,126 chunks: 45-70 ms a search) to find rows that score nothing.
    Only when no level found a row at all is the last level asked again with every word
    (``only_if_none``): a query of a common word and a misspelt one still finds the first.
    """
    unique = list(dict.fromkeys(t for t in query_terms if t))
    quoted = [_quoted(t) if isinstance(t, str) else _any_of(t.level_terms()) for t in unique]
    if not quoted:
        return []
    rare = [t for t in unique if (t if isinstance(t, str) else t.forms[0]) not in common] or unique
    any_word = _any_word(rare)
    n = len(quoted)
    levels: list[Level] = []
    if n > 1:
        levels.append(Level(n, "(" + " AND ".join(quoted) + ")"))
    if n <= MAX_LEVEL_WORDS:
        for words in range(n - 1, 1, -1):
            groups = ("(" + " AND ".join(group) + ")" for group in combinations(quoted, words))
            levels.append(Level(words, " OR ".join(groups)))
    levels.append(Level(1, any_word))
    if len(rare) < len(unique):
        levels.append(Level(1, _any_word(unique), only_if_none=True))
    return levels


def _any_word(terms: Sequence[SearchWord]) -> str:
    return " OR ".join(_quoted(t) if isinstance(t, str) else " OR ".join(map(_quoted, t.last_terms())) for t in terms)


def _any_of(forms: Sequence[str]) -> str:
    """One word of a level given as several forms: a row holding any of them holds it."""
    return _quoted(forms[0]) if len(forms) == 1 else "(" + " OR ".join(map(_quoted, forms)) + ")"


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'
