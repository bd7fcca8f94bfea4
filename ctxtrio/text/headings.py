"""What a hit's headings (its chunk's heading trail, its document's name) already say about a
query: for ranking (:func:`heading_share`), for choosing a window (:func:`unheaded_terms`), and
for its header (:func:`only_headed`: found by a heading word its text lacks). Pure.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from .stems import light_stem
from .terms import terms
from .words import held_words, identifier_parts, line_terms, stemmed_terms, word_groups

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["heading_share", "only_headed", "unheaded_terms"]


def heading_share(headings: Sequence[str], query_terms: Sequence[str]) -> float:
    """The share of the query's words that ``headings`` (a chunk's trail, its document's name) hold:
    what the text is about by its own titles, 0.0 to 1.0."""
    group = word_groups(tuple(query_terms), stem=True)
    if not group:
        return 0.0
    words = max(group.values()) + 1
    return len(held_words(stemmed_terms(" ".join(headings), stem=True), group, identifier_parts(group))) / words


def unheaded_terms(query_terms: Sequence[str], headings: Sequence[str]) -> list[str]:
    """The terms of the query's words that ``headings`` do not hold (all of them when the headings
    hold every word, or none): in a chunk under ``function makedirs`` of the document ``os``,
    ``os.makedirs exist_ok`` looks for ``exist_ok``; the headings already say the rest."""
    group = word_groups(tuple(query_terms), stem=False)
    held = held_words(terms(" ".join(headings)), group, identifier_parts(group))
    if not held or len(held) == max(group.values(), default=-1) + 1:
        return list(query_terms)
    return [term for term in query_terms if group.get(term, -1) not in held]


def only_headed(query_terms: Sequence[str], headings: Sequence[str], text: str) -> bool:
    """Whether ``headings`` hold a word of the query that ``text`` does not: a chunk found
    (also) by its heading trail whose text does not say why it matched. Headings that hold
    no query word end it without reading ``text``; else the text's terms are those ranking
    took already (:func:`~.words.line_terms`, cached)."""
    group = word_groups(tuple(query_terms), stem=False)
    parts = identifier_parts(group)
    headed = held_words(terms(" ".join(headings)), group, parts)
    if not headed:
        return False
    per_line = line_terms(text, frozenset(map(light_stem, query_terms)))
    return bool(headed - held_words(itertools.chain.from_iterable(per_line), group, parts))
