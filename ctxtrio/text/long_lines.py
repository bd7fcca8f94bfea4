"""A text's lines broken at their sentences, for choosing a passage. Pure.

A passage (:mod:`.passages`) is whole lines. A note written as a paragraph on one line (a
commit message, unwrapped markdown, a model's own note) is one line, so a passage of it is
either all of it or, when that does not fit, the characters cut around its first match
(:func:`~.cutting.cut_around`), wherever the answer lies. :func:`sentence_lines` gives the
text with the space after each sentence inside a line (:func:`~.sentences.sentence_ends`)
turned into a line break: the same length and offsets, so the passage chosen over it, by
:func:`~.passages.best_passage`'s rules, is shown from the text as written (:func:`cut_by_sentences`).
Used by session recall (``memory/packing.py``), and by doc_search for a chunk none of whose
lines fits a hit's room (``docs/packing.py``: a commit message or an unwrapped markdown
paragraph; a manual's wrapped lines keep their whole-line passages).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from .cutting import cut_around
from .passages import best_passage, cut_to_passage, marked_text
from .sentences import sentence_ends
from .terms import unique_terms

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .tokens import TokenModel

__all__ = ["cut_by_sentences", "sentence_lines"]

_WIDE_ENDS = frozenset("。！？．｡")


@functools.lru_cache(maxsize=64)
def sentence_lines(text: str) -> str:
    """``text`` with the space after each sentence end inside a line made a line break, or, where
    no space follows (Chinese and Japanese), the full-width mark that ends it; every other
    character where it was. Every line, not only those longer than a budget: a wrapped
    line's sentence may end mid-line, and a window may start there (recall_bench: the same
    answers breaking only lines over 200 characters, fewer over 400 or 1,000). Cached: a cut is
    searched for in several rooms."""
    chars: list[str] | None = None
    at = 0
    for line in text.split("\n"):
        for end in sentence_ends(line):
            # The space after the sentence, or (no space in Chinese and Japanese) its own full-width mark.
            gap = end if line[end] in " \t" else end - 1 if line[end - 1] in _WIDE_ENDS else None
            if gap is not None:
                chars = chars if chars is not None else list(text)
                chars[at + gap] = "\n"
        at += len(line) + 1
    return text if chars is None else "".join(chars)


def cut_by_sentences(
    text: str,
    query_terms: Sequence[str],
    budget_tokens: int,
    model: TokenModel,
) -> str:
    """:func:`~.passages.cut_to_passage` of ``text`` with its lines broken at their sentences:
    ``text`` whole when it fits, else the window of sentences and lines densest in ``query_terms``
    (:func:`~.passages.best_passage`), as written, with cut marks; when no sentence fits, or the
    window leaves out a sentence holding more of the query's words than it does, the characters
    around the match (:func:`~.cutting.cut_around`). A text without a sentence end inside a line
    is cut by :func:`~.passages.cut_to_passage`, as before."""
    if model.estimate(text) <= budget_tokens:
        return text
    broken = sentence_lines(text)
    if query_terms and broken != text:
        rate = model.estimate(text) / max(1, len(text))
        passage = best_passage(broken, query_terms, budget_tokens, model, rate)
        if passage is not None:
            shown = marked_text(text, passage)
            # A window that fits only by leaving out the sentence holding the most of the query (too
            # long for the budget) loses the spot that matters: it is cut around instead.
            if _held(shown, tuple(query_terms)) >= _most_held(broken, tuple(query_terms)):
                return shown
        return cut_around(text, query_terms, budget_tokens, model)
    return cut_to_passage(text, query_terms, budget_tokens, model)


def _held(text: str, query_terms: tuple[str, ...]) -> int:
    """How many of ``query_terms`` ``text`` holds."""
    return len(set(unique_terms(text)).intersection(query_terms))


@functools.lru_cache(maxsize=64)
def _most_held(text: str, query_terms: tuple[str, ...]) -> int:
    """The most of ``query_terms`` one line of ``text`` holds. Cached: a cut is searched for in
    several rooms (``memory/packing``), each asking again of the same text."""
    return max(_held(line, query_terms) for line in text.split("\n"))
