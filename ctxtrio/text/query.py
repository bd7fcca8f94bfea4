"""The terms of a query: a question's function words left out. Pure.

A model asks "What does the -X importtime option do?". Indexed text and queries share
:func:`~ctxtrio.text.terms.terms` (so ``-X`` gives ``x``, ``--if-exists`` gives
``ifexists`` and ``exists``, ``snake_case`` gives ``snakecase``, ``snake``, ``case``,
``a.b`` gives ``a`` and ``b``: each stays searchable), but words like ``what``,
``does`` and ``do`` would weigh as much as content in BM25 and in the choice of a
passage. :func:`query_terms` drops them, unless nothing else is left (a query of only
such words still searches for them). So do words of quantity and manner that name no
topic (``many``, ``several``, ``some``, ``few``, ``other``, ``instead``, ``still``): "How many listeners can
an event have" is about listeners and events. Words that are also SQL or shell keywords
(``not``, ``all``, ``any``, ``before``, ``only``, ``each``, ``like``, ``out``) are kept, and so
is a question word the query writes in capitals: "Does EXPLAIN ANALYZE actually execute the
statement?" asks about SQL's EXPLAIN (an HTTP ``GET``, PL/pgSQL's ``DO``), not for an explanation.

An English contraction is its first word (:func:`uncontracted`): ``doesn't`` is ``does``, a question
word, not the term ``doesn`` that a search would require of every row it ranks first.

A word joined to a prefix by a hyphen (``re-raising``, ``non-blocking``, ``multi-line``: a
:func:`compounds` word) gives the joined word, the prefix and the word after it. In a long
question, :func:`without_prefixes` leaves the prefix alone out: ``re`` names no topic there,
yet it is the regex module's name and a word of 531 of python3.11-doc's 7,973 chunks.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

from .terms import terms, unique_terms

__all__ = ["PREFIXES", "QUESTION_WORDS", "compounds", "query_terms", "without_prefixes"]

#: Words that shape a question rather than say what it is about (beyond terms.STOPWORDS).
QUESTION_WORDS: Final = frozenset(
    """what whats which who whom whose when where why how
    do does did doing done can could should would may might must shall
    am me my mine myself us ours yours him hers theirs i
    here get gets got happen happens happened way ways please tell explain
    actually really want wants need needs let lets someone something anything
    vs versus
    many much several some few other others later inside whenever thing things also just even still ever instead""".split()
)


#: Prefixes written joined to a word by a hyphen, none a topic alone. Not ``self``, ``out``,
#: ``over``, ``counter`` or ``post``: alone, each is also a name or a keyword (``self``, ``OUT``,
#: ``collections.Counter``, HTTP ``POST``).
PREFIXES: Final = frozenset("re pre non co un sub multi anti de semi inter mis bi tri mid".split())

#: A word written plainly as a prefix, a hyphen and a word of letters (not an option such as
#: ``--no-owner``, not part of a longer name such as ``re-raise-x`` or ``a.re-b``).
_COMPOUND: Final = re.compile(r"(?<![\w.\-/:@$])([A-Za-z]+)-([A-Za-z]{3,})(?![\w\-(/:@]|\.\w)")

#: A word written in capitals, two letters or more: a question word so written names something.
_CAPITALS: Final = re.compile(r"(?<![\w.-])[A-Z]{2,}(?![\w.-])")

#: An English contraction: a word and ``n't`` (``doesn't``, ``isn't``, ``can't``), or a word and
#: ``'re``, ``'ve``, ``'ll``, ``'m``, ``'d`` (``you're``, ``I'm``), with a straight or curly apostrophe.
_CONTRACTION: Final = re.compile(r"\b([A-Za-z]+?)(n['\u2019]t|['\u2019](?:re|ve|ll|m|d))\b", re.IGNORECASE)
#: The auxiliaries whose ``n't`` form is not the word and ``n't``: ``can't``, ``won't``, ``shan't``.
_NOT_FORMS: Final = {"ca": "can", "wo": "will", "sha": "shall"}


def compounds(query: str) -> dict[str, str]:
    """The words of ``query`` joined to a :data:`PREFIXES` prefix by a hyphen, as the index holds
    them whole (``reraising``), each to its word after the prefix (``raising``), in lower case."""
    found: dict[str, str] = {}
    for match in _COMPOUND.finditer(query):
        prefix, word = match.group(1).lower(), match.group(2).lower()
        if prefix in PREFIXES:
            found[prefix + word] = word
    return found


def uncontracted(query: str) -> str:
    """``query`` with each English contraction as its first word alone: ``doesn't`` as ``does``,
    ``can't`` as ``can``, ``I'm`` as ``I``. Split at its apostrophe, ``doesn't`` gave the term
    ``doesn`` and ``I'm`` gave ``m`` (``python -m``'s option): words no question word list holds,
    which a search then required of every row it ranked first ("Why doesn't Python have a switch
    statement?" found the FAQ answering it only past its 15th row). The negation goes too, as
    the manual's own ``isn't`` is indexed as ``isn`` and ``t``, never ``not``."""

    def first(match: re.Match[str]) -> str:
        word = match.group(1)
        return _NOT_FORMS.get(word.lower(), word) if match.group(2)[0] in "nN" else word

    return _CONTRACTION.sub(first, query)


def query_terms(query: str) -> list[str]:
    """The distinct terms of ``query`` in order, without :data:`QUESTION_WORDS` (unless only those)
    but those the query writes in capitals (``EXPLAIN``, ``GET``, ``DO``); a contraction is its
    first word (:func:`uncontracted`)."""
    found = unique_terms(uncontracted(query))
    named = {word.lower() for word in _CAPITALS.findall(query)}
    kept = [term for term in found if term not in QUESTION_WORDS or term in named]
    return kept or found


def without_prefixes(query: str, found: list[str]) -> list[str]:
    """``found`` (terms of ``query``) without each prefix that only :func:`compounds` words give
    (``re`` of ``re-raising``; not of ``re-raising with re``), unless nothing else is left."""
    every = terms(query)
    prefixes = Counter(match.group(1).lower() for match in _COMPOUND.finditer(query))
    only_joined = {prefix for prefix, times in prefixes.items() if prefix in PREFIXES and every.count(prefix) <= times}
    return [term for term in found if term not in only_joined] or found
