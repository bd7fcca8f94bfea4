"""The words of a query as passages count them: an identifier and its parts are one word,
held whole or by all its parts; and how rare each word is, for choosing a window. Pure.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .terms import light_stem, terms

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "held_words",
    "identifier_parts",
    "rarity_weights",
    "stemmed_terms",
    "word_groups",
    "word_weights",
]


def word_groups(query_terms: Sequence[str], *, stem: bool) -> dict[str, int]:
    """Each query term's word: an identifier's parts follow it in the query's terms
    (``pghba``, ``pg``, ``hba``) and count as that one word, so ``pg_hba`` weighs as
    much as ``record``, and its parts side by side are not a phrase."""
    group: dict[str, int] = {}
    word, whole, at = -1, "", 0
    for term in dict.fromkeys(map(light_stem, query_terms) if stem else query_terms):
        found = whole.find(term, at) if len(term) < len(whole) else -1
        if found >= 0:
            at = found + len(term)
        else:
            word, whole, at = word + 1, term, 0
        group[term] = word
    return group


def identifier_parts(group: dict[str, int]) -> dict[int, frozenset[str]]:
    """The parts of each word of the query that is an identifier with parts (``pghba``: ``pg``, ``hba``)."""
    terms_of: dict[int, list[str]] = {}
    for term, word in group.items():
        terms_of.setdefault(word, []).append(term)
    return {word: frozenset(found[1:]) for word, found in terms_of.items() if len(found) > 1}


def held_words(line_terms: Iterable[str], group: dict[str, int], parts: dict[int, frozenset[str]]) -> set[int]:
    """The query's words among ``line_terms``: an identifier with parts is held by its whole
    (``hash_mem_multiplier``) or by all its parts, not by one part (``work_mem`` holds no
    ``mem`` of ``hash_mem_multiplier``)."""
    held: set[int] = set()
    seen: dict[int, set[str]] = {}
    for term in line_terms:
        word = group.get(term, -1)
        if word < 0:
            continue
        wanted = parts.get(word)
        if wanted is None or term not in wanted:
            held.add(word)  # a single-term word, or the identifier whole
        else:
            seen.setdefault(word, set()).add(term)
    held.update(word for word, found in seen.items() if len(found) == len(parts[word]))
    return held


def stemmed_terms(text: str, *, stem: bool) -> list[str]:
    """The terms of ``text``, with ``stem`` each without its inflection (:func:`~.terms.light_stem`)."""
    return list(map(light_stem, terms(text))) if stem else terms(text)


def rarity_weights(doc_counts: Mapping[str, int], rows: int) -> dict[str, float]:
    """Each term's weight in choosing a window: its inverse document frequency (BM25's, over
    ``rows`` with ``doc_counts`` holding each term) over the highest of them, squared, so the
    rarest word of the query weighs 1.0 and a common one little (in PostgreSQL's manual
    ``currval`` 1.0, ``session`` 0.21, ``before`` 0.11)."""
    idf = {term: math.log(1 + (rows - count + 0.5) / (count + 0.5)) for term, count in doc_counts.items()}
    top = max(idf.values(), default=0.0)
    return {term: (value / top) ** 2 for term, value in idf.items()} if top > 0 else {}


def word_weights(query_terms: Sequence[str], rarity: Mapping[str, float]) -> tuple[float, ...]:
    """The weight of each word of the query (:func:`word_groups`): its rarest term's, 1.0 for one unknown."""
    group = word_groups(tuple(query_terms), stem=False)
    weights = [0.0] * (max(group.values(), default=-1) + 1)
    for term, word in group.items():
        weights[word] = max(weights[word], rarity.get(term, 1.0))
    return tuple(weights)
