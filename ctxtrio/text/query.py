"""The terms of a query: a question's function words left out. Pure.

A model asks "What does the -X importtime option do?". Indexed text and queries share
:func:`~ctxtrio.text.terms.terms` (so ``-X`` gives ``x``, ``--if-exists`` gives
``ifexists`` and ``exists``, ``snake_case`` gives ``snakecase``, ``snake``, ``case``,
``a.b`` gives ``a`` and ``b``: each stays searchable), but words like ``what``,
``does`` and ``do`` would weigh as much as content in BM25 and in the choice of a
passage. :func:`query_terms` drops them, unless nothing else is left (a query of only
such words still searches for them). So do words of quantity and manner that name no
topic (``many``, ``several``, ``some``, ``other``, ``instead``, ``still``): "How many listeners can
an event have" is about listeners and events. Words that are also SQL or shell keywords
(``not``, ``all``, ``any``, ``before``, ``only``, ``each``, ``like``, ``out``) are kept, and so
is a question word the query writes in capitals: "Does EXPLAIN ANALYZE actually execute the
statement?" asks about SQL's EXPLAIN (an HTTP ``GET``, PL/pgSQL's ``DO``), not for an explanation.
"""

from __future__ import annotations

import re
from typing import Final

from .terms import unique_terms

__all__ = ["QUESTION_WORDS", "query_terms"]

#: Words that shape a question rather than say what it is about (beyond terms.STOPWORDS).
QUESTION_WORDS: Final = frozenset(
    """what whats which who whom whose when where why how
    do does did doing done can could should would may might must shall
    am me my mine myself us ours yours him hers theirs i
    here get gets got happen happens happened way ways please tell explain
    actually really want wants need needs let lets someone something anything
    vs versus
    many much several some other others later inside whenever thing things also just even still ever instead""".split()
)


#: A word written in capitals, two letters or more: a question word so written names something.
_CAPITALS: Final = re.compile(r"(?<![\w.-])[A-Z]{2,}(?![\w.-])")


def query_terms(query: str) -> list[str]:
    """The distinct terms of ``query`` in order, without :data:`QUESTION_WORDS` (unless only those)
    but those the query writes in capitals (``EXPLAIN``, ``GET``, ``DO``)."""
    found = unique_terms(query)
    named = {word.lower() for word in _CAPITALS.findall(query)}
    kept = [term for term in found if term not in QUESTION_WORDS or term in named]
    return kept or found
