"""Cutting a long text into slices of at most a token budget, along its structure. Pure.

Paragraphs (blank-line separated) are packed whole; a paragraph over the budget is
cut into sentences, and a sentence over the budget into pieces of characters. The
same text and model always give the same slices, so cached slice summaries are found
again on the next call.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from ..text.sentences import split_sentences

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..text.tokens import TokenModel

__all__ = ["slice_text"]

_PARAGRAPH_BREAK: Final = re.compile(r"\n[ \t]*\n")


def slice_text(text: str, *, max_tokens: int, model: TokenModel) -> list[str]:
    """``text`` in consecutive slices of at most ``max_tokens`` estimated tokens each."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    slices: list[str] = []
    current: list[str] = []
    current_tokens = 0
    for piece, separator in _pieces(text, max_tokens, model):
        tokens = model.estimate(piece)
        if current and current_tokens + tokens > max_tokens:
            slices.append("".join(current).strip())
            current, current_tokens = [], 0
        current.append(piece + separator)
        current_tokens += tokens
    if current:
        slices.append("".join(current).strip())
    return [piece for piece in slices if piece]


def _pieces(text: str, max_tokens: int, model: TokenModel) -> Iterator[tuple[str, str]]:
    """(piece, separator) pairs, each piece within ``max_tokens``."""
    for paragraph in _PARAGRAPH_BREAK.split(text):
        if not paragraph.strip():
            continue
        if model.estimate(paragraph) <= max_tokens:
            yield paragraph, "\n\n"
            continue
        for sentence in split_sentences(paragraph):
            if model.estimate(sentence) <= max_tokens:
                yield sentence, " "
            else:
                yield from ((part, "") for part in _cut(sentence, max_tokens, model))
        yield "", "\n\n"


def _cut(sentence: str, max_tokens: int, model: TokenModel) -> Iterator[str]:
    """Pieces of ``sentence`` by characters, each within ``max_tokens``.

    Each step looks at a window of ``8 * max_tokens`` characters only (no rate is
    below 1/8 token per character in practice), so a huge unpunctuated text is cut in
    linear time.
    """
    start = 0
    while start < len(sentence):
        window = sentence[start : start + 8 * max_tokens]
        size = len(window)
        tokens = model.estimate(window)
        if tokens > max_tokens:
            size = max(1, size * max_tokens // tokens)
            while size > 1 and model.estimate(window[:size]) > max_tokens:
                size = size * 9 // 10
        yield window[:size]
        start += size
