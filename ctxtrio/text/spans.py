"""Token estimates of many spans of one text, without encoding the text again for each.

Chunking estimates every block of a document and then every chunk
(:mod:`ctxtrio.text.chunking`): about 100 spans per stdlib file, most of them a few
hundred characters, where :meth:`TokenModel.estimate` spends more on encoding and
translating its argument than on counting. :class:`SpanEstimates` classifies an ASCII
text once, as :func:`~ctxtrio.text.tokens._counts` does: one class code per character
and one boundary code per character (with its predecessor), and then counts a span with
``bytes.count(code, start, end)`` on those two strings. A span's first boundary is the
one thing that differs from the whole text's (its predecessor is the span's edge, code
0, not the character before it), and is corrected for. The counts are those
``_counts(text[start:end])`` gives, so every estimate equals ``model.estimate(text[start:end])``
(``tests/text/test_spans.py`` holds this on every span of real files). Texts with
non-ASCII characters are estimated span by span as before.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .tokens import (
    _A_CONTROL,
    _A_DIGIT,
    _A_NEWLINE,
    _A_PUNCT,
    _A_SPACE,
    _ASCII_TABLE,
    _INDENT,
    _PAIR_TABLE,
    _PUNCT_START,
    _ROUNDING_SLACK,
    _SPACE_START,
    _WORD_BREAK,
)

if TYPE_CHECKING:
    from .tokens import TokenModel

__all__ = ["SpanEstimates"]


class SpanEstimates:
    """``estimate(start, end) == model.estimate(text[start:end])``, for any span of ``text``."""

    __slots__ = ("_marked", "_model", "_pairs", "_rates", "_text")

    def __init__(self, text: str, model: TokenModel) -> None:
        self._text = text
        self._model = model
        self._rates = model.ordered
        self._marked = b""
        self._pairs = b""
        if text and text.isascii():
            marked = text.encode().translate(_ASCII_TABLE)
            codes = int.from_bytes(marked)
            self._marked = marked
            self._pairs = (codes | (codes >> 5)).to_bytes(len(marked)).translate(_PAIR_TABLE)

    def estimate(self, start: int, end: int) -> int:
        """The estimate of ``text[start:end]`` (0 for an empty span)."""
        if end <= start:
            return 0
        marked = self._marked
        if not marked:
            return self._model.estimate(self._text[start:end])
        pairs = self._pairs
        digit, punct = marked.count(_A_DIGIT, start, end), marked.count(_A_PUNCT, start, end)
        space = marked.count(_A_SPACE, start, end) + marked.count(_A_NEWLINE, start, end)
        control = marked.count(_A_CONTROL, start, end)
        letter = end - start - digit - space - punct - control
        first = _PAIR_TABLE[marked[start]]  # the span's first character follows nothing (code 0)
        after = start + 1
        punct_runs = pairs.count(_PUNCT_START, after, end) + (first == _PUNCT_START)
        space_runs = pairs.count(_SPACE_START, after, end) + (first == _SPACE_START)
        breaks = pairs.count(_WORD_BREAK, after, end) + (first == _WORD_BREAK)
        indents = pairs.count(_INDENT, after, end) + (first == _INDENT)
        # TokenModel.estimate_counts' sum, term by term in the same order, without the
        # non-ASCII classes' terms (each adds 0.0, which leaves a float as it is).
        rate = self._rates
        total = (
            digit * rate[0]
            + space * rate[1]
            + letter * rate[2]
            + punct * rate[3]
            + control * rate[8]
            + punct_runs * rate[9]
            + space_runs * rate[10]
            + breaks * rate[11]
            + indents * rate[12]
        )
        return max(1, math.ceil(total - _ROUNDING_SLACK))
