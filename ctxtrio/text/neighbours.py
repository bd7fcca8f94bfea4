"""Query expansion by word neighbours: a plain English word of a question that the corpus
seldom uses also searches for the words nearest it in meaning. Pure, apart from reading
the shipped table once.

A paraphrase often shares few words with its answer: "rerun a query every few seconds"
against psql's "Wait the specified number of seconds between executions". The table
``neighbours.txt.gz`` (built by ``stress/build_neighbours.py`` from all-MiniLM-L6-v2's
vocabulary, Apache-2.0, by a rule and never edited by hand; 530 KB) gives ~20,000
English words up to :data:`NEIGHBOURS` others near them in the model's static token
vectors (``folder``: ``directory``, ``dir``, ``explorer``, ...), without forms of the
word itself and without words that name no topic.

:func:`expand` turns a query's terms into search words. A term expands when it is a
plain word of the query (letters only, not part of an identifier such as ``os.path``,
``max_size`` or ``getUserName``; :func:`plain_words`) that at most :data:`RARE` of the
indexed rows hold: the corpus seldom says it that way. It gains the neighbours that
more than :data:`MORE` times as many rows hold: the corpus's own words for it. The word
becomes a group ``(term, term, neighbour, ...)``: the index matches it when a row holds
any of them, but only where the search has come down to rows holding *any* of the
query's words (:func:`~ctxtrio.store.rows.fts_levels`), and the term named twice weighs
twice a neighbour in BM25. Measured on the three public sets of
``stress/retrieval_bench.py`` (README, Measured).
"""

from __future__ import annotations

import functools
import gzip
import re
from importlib import resources
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "MORE",
    "NEIGHBOURS",
    "RARE",
    "SearchWord",
    "expand",
    "expandable",
    "load",
    "loaded",
    "neighbours_of",
    "plain_words",
    "rare_words",
]

#: A word of a search: a term, or a term and its neighbours (the term first, named twice).
SearchWord = str | tuple[str, ...]

#: Neighbours a word gains at most (the table holds this many, best first).
NEIGHBOURS: Final = 6
#: A word expands only when at most this share of the indexed rows hold it.
RARE: Final = 0.01
#: A neighbour is added only when more than this many times the word's rows hold it.
MORE: Final = 3.0
#: How many times a group names its own term: a neighbour weighs 1 / this of it in BM25.
_OWN_WEIGHT: Final = 2

#: A word of the query written plainly: letters only, not joined to an identifier's
#: connectors or dots, lower case or capitalised (not ``TOAST``, not ``getUser``).
_PLAIN: Final = re.compile(r"(?<![\w.\-/:@$])([A-Za-z][a-z]+)(?![\w\-(/:@]|\.\w)")


@functools.cache
def _table() -> dict[str, str]:
    """The shipped table: word -> the rest of its line (``neighbour:score`` pairs, best
    first), parsed when asked (:func:`neighbours_of`): ~20 ms to read, where parsing
    every line took ~180 ms."""
    raw = resources.files(__package__).joinpath("neighbours.txt.gz").read_bytes()
    return dict(line.split(" ", 1) for line in gzip.decompress(raw).decode("ascii").splitlines())


def load() -> None:
    """Read the table now (blocking file work: callers on an event loop run it in a thread)."""
    _table()


def loaded() -> bool:
    """Whether the table has been read (:func:`load`)."""
    return _table.cache_info().currsize > 0


def neighbours_of(word: str) -> tuple[str, ...]:
    """The neighbours of ``word`` in the table, best first (none for a word it lacks)."""
    near = _table().get(word)
    return () if near is None else tuple(pair.partition(":")[0] for pair in near.split(" "))


def plain_words(query: str) -> set[str]:
    """The words of ``query`` written plainly (letters only, not part of an identifier), casefolded."""
    return {match.group(1).lower() for match in _PLAIN.finditer(query)}


def expandable(query: str, terms: Sequence[str]) -> list[str]:
    """The terms that may expand: the plain words of ``query`` among ``terms`` that have neighbours."""
    plain = plain_words(query)
    return [term for term in dict.fromkeys(terms) if term in plain and neighbours_of(term)]


def rare_words(words: Sequence[str], counts: Mapping[str, int], rows: int) -> list[str]:
    """Those of ``words`` held by at most :data:`RARE` of ``rows`` (``counts``: rows holding each)."""
    return [word for word in words if counts.get(word, 0) <= RARE * rows]


def expand(query: str, terms: Sequence[str], counts: Mapping[str, int], rows: int) -> list[SearchWord]:
    """``terms`` as search words: a plain word of ``query`` held by at most :data:`RARE` of
    ``rows`` grouped with its neighbours held by more than :data:`MORE` times as many rows
    (``counts``: rows holding each term; a neighbour not counted counts as none) and not
    among ``terms``; every other term alone."""
    plain = plain_words(query)
    taken = set(terms)
    words: list[SearchWord] = []
    for term in terms:
        held = counts.get(term, 0)
        near: list[str] = []
        if term in plain and held <= RARE * rows:
            near = [w for w in neighbours_of(term) if w not in taken and counts.get(w, 0) > MORE * held]
        taken.update(near)
        words.append((*(term,) * _OWN_WEIGHT, *near) if near else term)
    return words
