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

Every plain word also searches for its other regular forms (:func:`~.stems.inflections`)
that more than :data:`FORMS_MORE` times as many rows hold, at every level: the index
holds words as written, so over python3.11-doc "dumping JSON" found no row saying "dump"
or "dumps", and "the middle value of a list of numbers" none saying "number", where the
documents say it that way.

A plain word the programming thesaurus knows (:mod:`.thesaurus`: "unchangeable" for
"immutable", "checksum" for "hash", "leading zeros" for "zfill") also searches for the
documentation's words for it that more rows hold than all its forms (:data:`ALIKE_MORE`):
at the last level, and at every level beside its forms when at most :data:`RARE` of the
rows hold any of its forms (the corpus does not say it that way). A group with such words
names each of its terms once: a word of the thesaurus weighs as much as the word asked,
where neighbours alone weigh half. Measured on the four dev sets of
``stress/retrieval_bench.py`` (answers inside 1,000 tokens, of 199): the word asked named
twice 1 answer fewer; the thesaurus's words at every level for every word 5 fewer, at the
last level only the same (1 fewer at 500); words held by over half or by over twice the
word's rows instead of over as many, 3 and 2 fewer; a cap on how many rows a word of the
thesaurus may hold (2%, 5%, 10% of them), 0 to 2 fewer.
"""

from __future__ import annotations

import functools
import gzip
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Final

from . import thesaurus
from .query import compounds
from .stems import inflections

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "ALIKE_MORE",
    "FORMS_MORE",
    "MORE",
    "NEIGHBOURS",
    "RARE",
    "Group",
    "SearchWord",
    "alike_of",
    "alike_words",
    "counted_first",
    "expand",
    "expandable",
    "load",
    "load_tables",
    "loaded",
    "neighbours_of",
    "other_forms",
    "plain_words",
    "rare_words",
    "tables_loaded",
    "wanted",
]


#: Neighbours a word gains at most (the table holds this many, best first).
NEIGHBOURS: Final = 6
#: A word expands only when at most this share of the indexed rows hold it.
RARE: Final = 0.01
#: A neighbour is added only when more than this many times the word's rows hold it.
MORE: Final = 3.0
#: How many times a group names its own term: a neighbour weighs 1 / this of it in BM25.
_OWN_WEIGHT: Final = 2
#: Another form of a plain word is searched for too when more than this many times the
#: rows holding the word as asked hold it (the documents' own way of saying it). 2.0 gave
#: one answer more on Node's set and the right file in the top 3 once less; 5.0 none of
#: python3.11-doc's second set's gains (in-process runs of the four dev sets).
FORMS_MORE: Final = 3.0
#: A word of the thesaurus is searched for when more than this many times the rows of all
#: the forms of the word asked hold it (with 0.5 and 2.0, 3 and 2 answers fewer inside
#: 1,000 tokens over the four dev sets of ``stress/retrieval_bench.py``).
ALIKE_MORE: Final = 1.0


@dataclass(frozen=True, slots=True)
class Group:
    """A word of the query searched as several terms: its ``forms`` (the word as asked first)
    at every level of the search, its ``near`` neighbours only where the search has come
    down to rows holding any word (:func:`~ctxtrio.store.rows.fts_levels`), and the
    thesaurus's ``alike`` words there too, or at every level when ``everywhere``."""

    forms: tuple[str, ...]
    near: tuple[str, ...] = ()
    alike: tuple[str, ...] = ()
    everywhere: bool = False

    def level_terms(self) -> tuple[str, ...]:
        """The terms ORed for this word at every level: its forms, and its ``alike`` words when ``everywhere``."""
        return self.forms + self.alike if self.everywhere else self.forms

    def last_terms(self) -> tuple[str, ...]:
        """The terms ORed where any word would do. With words of the thesaurus, every term
        once (each weighs as much as the word asked); else, with neighbours, each form named
        :data:`_OWN_WEIGHT` times, so that it weighs that many times a neighbour in BM25."""
        if self.alike:
            return self.forms + self.alike + self.near
        return self.forms * _OWN_WEIGHT + self.near if self.near else self.forms


#: A word of a search: a term, or a group of terms (:class:`Group`).
SearchWord = str | Group

#: A word of the query written plainly: letters only, not joined to an identifier's
#: connectors or dots, lower case or capitalised (not ``TOAST``, not ``getUser``). One letter
#: is a word too: the language of "a C++ extension", "shorthand from C", "presses Ctrl+C", which
#: the thesaurus's phrases ("c extension", "ctrl c") name (with two letters at least, none matched).
_PLAIN: Final = re.compile(r"(?<![\w.\-/:@$])([A-Za-z][a-z]*)(?![\w\-(/:@]|\.\w)")


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


def load_tables() -> None:
    """Read every table :func:`expand` uses, this one and the thesaurus (blocking file work, ~30 ms:
    callers on an event loop run it in a thread once, when :func:`tables_loaded` says no)."""
    load()
    thesaurus.load()


def tables_loaded() -> bool:
    """Whether :func:`load_tables` has read them all."""
    return loaded() and thesaurus.loaded()


def neighbours_of(word: str) -> tuple[str, ...]:
    """The neighbours of ``word`` in the table, best first (none for a word it lacks)."""
    near = _table().get(word)
    return () if near is None else tuple(pair.partition(":")[0] for pair in near.split(" "))


def plain_words(query: str) -> set[str]:
    """The words of ``query`` written plainly (letters only, not part of an identifier), casefolded,
    and the word after the prefix of a word joined to one (``raising`` of ``re-raising``: :func:`~.query.compounds`)."""
    return {match.group(1).lower() for match in _PLAIN.finditer(query)} | set(compounds(query).values())


def expandable(query: str, terms: Sequence[str]) -> list[str]:
    """The terms that may expand: the plain words of ``query`` among ``terms`` that have neighbours."""
    plain = plain_words(query)
    return [term for term in dict.fromkeys(terms) if term in plain and neighbours_of(term)]


def rare_words(words: Sequence[str], counts: Mapping[str, int], rows: int) -> list[str]:
    """Those of ``words`` held by at most :data:`RARE` of ``rows`` (``counts``: rows holding each)."""
    return [word for word in words if counts.get(word, 0) <= RARE * rows]


def other_forms(query: str, terms: Sequence[str]) -> list[str]:
    """The other forms of each plain word of ``query`` among ``terms`` (:func:`~.stems.inflections`), none a term."""
    plain = plain_words(query)
    taken = set(terms)
    forms = (form for term in dict.fromkeys(terms) if term in plain for form in inflections(term)[1:])
    return [form for form in dict.fromkeys(forms) if form not in taken]


def alike_words(query: str, terms: Sequence[str], counts: Mapping[str, int]) -> dict[str, tuple[str, ...]]:
    """The thesaurus's words for the plain words of ``query`` among ``terms`` (:func:`~.thesaurus.alike`;
    a phrase's words go to its word that the fewest rows hold, by ``counts``), by word."""
    plain = plain_words(query)
    return thesaurus.alike([term for term in dict.fromkeys(terms) if term in plain], counts)


def counted_first(query: str, terms: Sequence[str]) -> list[str]:
    """The words to count with ``terms`` before :func:`expand`, none a term: the :func:`other_forms`
    and every thesaurus word for the plain words of ``query`` (which of them a word gains depends
    on the counts, which words there are does not), so that :func:`wanted` seldom asks for more."""
    taken = set(terms)
    same = (word for found in alike_words(query, terms, {}).values() for word in found if word not in taken)
    return list(dict.fromkeys([*other_forms(query, terms), *same]))


def wanted(query: str, terms: Sequence[str], counts: Mapping[str, int], rows: int) -> list[str]:
    """The words :func:`expand` needs counted beyond ``counts`` (which holds ``terms``'): the
    :func:`other_forms`, the thesaurus's words (:func:`alike_words`) and the neighbours of the
    plain words held by at most :data:`RARE` of ``rows``."""
    near = [word for term in rare_words(expandable(query, terms), counts, rows) for word in neighbours_of(term)]
    same = [word for found in alike_words(query, terms, counts).values() for word in found]
    return [word for word in dict.fromkeys(other_forms(query, terms) + same + near) if word not in counts]


def alike_of(words: Sequence[SearchWord]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The thesaurus's words each plain word of a search gained (:func:`expand`) that the corpus
    seldom says (those searched at every level, :attr:`Group.everywhere`), by the word as asked: for
    the passages, where each counts a share of the word (:mod:`.runs`). A word the corpus says often
    is the documentation's own word already, and its thesaurus words may be of another sense
    ("TypedDict total=False": ``total`` gains ``add``, and "to add type hints" drew the window)."""
    return tuple((word.forms[0], word.alike) for word in words if isinstance(word, Group) and word.everywhere)


def expand(query: str, terms: Sequence[str], counts: Mapping[str, int], rows: int) -> list[SearchWord]:
    """``terms`` as search words (``counts``: rows holding each term, a word not counted held by
    none). A plain word of ``query`` becomes a :class:`Group` of its other forms held by more
    than :data:`FORMS_MORE` times its rows, the thesaurus's words for it (:func:`alike_words`)
    held by more than :data:`ALIKE_MORE` times the rows of all its forms (at every level when at
    most :data:`RARE` of ``rows`` hold any of its forms) and, when at most :data:`RARE` of ``rows`` hold it,
    its neighbours held by more than :data:`MORE` times the rows of all its forms; none is among
    ``terms`` or taken by a word before. A word that gains nothing, and every other term, stays alone.
    A word joined to a prefix the terms leave out (``reraising`` of ``re-raising``, without ``re``:
    :func:`~.query.without_prefixes`) is a form of its word after the prefix (``raising``), not a word
    of its own: else the row holding ``re-raising`` and a sixth word ranked above ``add_note``'s entry,
    which says "raised", for "add a note to an exception before re-raising it?"."""
    plain = plain_words(query)
    joined = {
        whole: word for whole, word in compounds(query).items() if word in terms and whole[: -len(word)] not in terms
    }
    alike = alike_words(query, terms, counts)
    taken = set(terms)
    words: list[SearchWord] = []
    for term in terms:
        if term in joined:
            continue  # a form of the word after its prefix
        if term not in plain:
            words.append(term)
            continue
        held = counts.get(term, 0)
        forms = (term, *(f for f in inflections(term)[1:] if f not in taken and counts.get(f, 0) > FORMS_MORE * held))
        forms += tuple(whole for whole, word in joined.items() if word == term and whole not in forms)
        taken.update(forms)
        own = sum(counts.get(form, 0) for form in forms)
        same = tuple(w for w in alike.get(term, ()) if w not in taken and counts.get(w, 0) > ALIKE_MORE * own)
        taken.update(same)
        near: tuple[str, ...] = ()
        if held <= RARE * rows:
            near = tuple(w for w in neighbours_of(term) if w not in taken and counts.get(w, 0) > MORE * own)
        taken.update(near)
        everywhere = bool(same) and own <= RARE * rows
        words.append(Group(forms, near, same, everywhere) if near or same or len(forms) > 1 else term)
    return words
