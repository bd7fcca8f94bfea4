"""A programming thesaurus for query expansion: the plain words people use for a thing in
software, mapped to the words documentation writes for it. Pure, apart from reading the
shipped table once.

A user who does not know a tool's name asks in everyday words: "unchangeable" where the
manual says "immutable" or "frozen", "checksum" where it says "hash" or "digest", "remember
what a function returned" where it says "cache" or "memoize", "cut the spaces off" where it
says "strip whitespace". A general-English table (WordNet, static word vectors) gives the
wrong senses for software ("terminal" a depot, "spaces" topology); this table is written for
software only (``thesaurus.txt``, by hand, without looking at any benchmark question; its
header says how).

Each line of the table is a group ``user words, user phrase, ... = term term ...``. A phrase
matches a query that holds each of its words in any order and inflection (compared by
:func:`~.stems.light_stem`, so "returned" matches "return"); a single word is a phrase of one.
What a query gains (:func:`alike`) is attached to the phrase's word that the fewest rows
hold (the later one of equals); :func:`~.neighbours.expand` decides where it searches and how
much it weighs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Final

from .query import QUESTION_WORDS
from .stems import light_stem
from .terms import STOPWORDS, unique_terms

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Phrase", "Table", "TableError", "alike", "load", "loaded", "parse", "table"]

#: The shipped table's file name, beside this module.
_FILE: Final = "thesaurus.txt"


class TableError(ValueError):
    """A line of a thesaurus table that does not follow its format (the message names the line)."""


@dataclass(frozen=True, slots=True)
class Phrase:
    """One way a user says a thing: the stems of its words, and the documentation's terms for it."""

    stems: tuple[str, ...]
    terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """A parsed thesaurus: its phrases by the stem of their first word."""

    by_first: Mapping[str, tuple[Phrase, ...]]
    groups: int

    def phrases(self) -> int:
        """How many phrases the table holds."""
        return sum(len(found) for found in self.by_first.values())


def parse(text: str) -> Table:
    """The table written in ``text`` (the format of ``thesaurus.txt``'s header).

    Raises :class:`TableError` for a line without ``=``, a side left empty, a user word that is
    not one plain lower-case word or that a query drops (a stopword or a question word: the
    phrase could never match), or a term that the index does not hold as one term."""
    by_first: dict[str, list[Phrase]] = {}
    groups = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "[")):
            continue
        said, sep, written = line.partition("=")
        terms = tuple(dict.fromkeys(_term(word, number) for word in written.split()))
        if not sep or not terms or not said.strip():
            raise TableError(f"line {number}: expected 'user words, ... = term term ...': {line!r}")
        groups += 1
        for phrase in said.split(","):
            words = phrase.split()
            if not words:
                raise TableError(f"line {number}: an empty phrase")
            for word in words:
                if not (word.isascii() and word.isalpha() and word.islower()) or word in _DROPPED:
                    raise TableError(f"line {number}: {word!r} is not a plain word a query keeps")
            stems = tuple(dict.fromkeys(light_stem(word) for word in words))
            by_first.setdefault(stems[0], []).append(Phrase(stems, terms))
    return Table({first: tuple(found) for first, found in by_first.items()}, groups)


#: Words a query never searches for (:func:`~.query.query_terms`), so no phrase may hold them.
_DROPPED: Final = STOPWORDS | QUESTION_WORDS


def _term(word: str, number: int) -> str:
    """``word`` as the index holds it: a name joined by ``_`` or ``-`` is one term (``lru_cache``
    is ``lrucache``); anything else that is not one term is an error of the table's line ``number``.

    So is a name with a leading or trailing ``_`` (a dunder, ``__call__``; Node's ``__dirname``): the
    index holds it as its bare word (``call``), the word of every row that says "call", so the table
    would search for something else than it names. So the name is refused and the table writes the bare
    word, as it is searched: it then says what it looks for (``__get__`` gave a descriptor ``get``, a
    word a query never searches for)."""
    found = unique_terms(word)
    if found and word.strip("_") != word:
        raise TableError(f"line {number}: {word!r} is the index term {found[0]!r}: write that, if it is meant")
    if not found or (len(found) == 1 and found[0] != word.lower()) or "." in word or found[0] in STOPWORDS:
        raise TableError(f"line {number}: {word!r} is not one index term")
    return found[0]


@functools.cache
def table() -> Table:
    """The shipped table (``thesaurus.txt``), read and parsed once a process (~5 ms)."""
    return parse(resources.files(__package__).joinpath(_FILE).read_text("ascii"))


def load() -> None:
    """Read the shipped table now (blocking file work: callers on an event loop run it in a thread)."""
    table()


def loaded() -> bool:
    """Whether the shipped table has been read (:func:`load`)."""
    return table.cache_info().currsize > 0


def alike(
    words: Sequence[str], held: Mapping[str, int] | None = None, source: Table | None = None
) -> dict[str, tuple[str, ...]]:
    """The documentation's terms for the phrases that ``words`` (a query's plain words, in order)
    hold, by the word each is attached to: of the phrase's words, the one the fewest rows hold
    (``held``: rows holding each word, none counted by default), the later one of equals.
    A word that gains nothing is absent. ``source``: the table (the shipped one by default)."""
    found = source if source is not None else table()
    rows = held if held is not None else {}
    at = {light_stem(word): n for n, word in enumerate(words)}  # a stem's last place in the query
    gained: dict[int, list[str]] = {}
    for stem in dict.fromkeys(at):
        for phrase in found.by_first.get(stem, ()):
            if all(other in at for other in phrase.stems):
                place = min((at[other] for other in phrase.stems), key=lambda n: (rows.get(words[n], 0), -n))
                gained.setdefault(place, []).extend(phrase.terms)
    return {words[n]: tuple(dict.fromkeys(terms)) for n, terms in sorted(gained.items())}
