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
(``tests/text/test_spans.py`` holds this on every span of real files).

A text with a few non-ASCII characters (source code with a name or a symbol in a
comment) is classified the same way without them, as ``_counts`` does (it drops them
before classifying): a span without any is counted there, its ends moved left by the
non-ASCII characters before it; a span with some, and every span of a text with many
(CJK), is estimated on its own as before.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from typing import TYPE_CHECKING, Final

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


#: Above one non-ASCII character in this many, every span of a text is estimated on its own.
_FEW_NON_ASCII: Final = 64
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")
#: Class codes as counted: a line feed is whitespace like any other (pairs still tell it apart,
#: and as a span's first character it starts a whitespace run all the same).
_SPACE_FOR_NEWLINE: Final = bytes(_A_SPACE if code == _A_NEWLINE else code for code in range(256))
#: Boundary kinds (pair codes) and their rates' places in :attr:`TokenModel.ordered`, in the sum's order.
_BOUNDARY_RATES: Final = ((_PUNCT_START, 9), (_SPACE_START, 10), (_WORD_BREAK, 11), (_INDENT, 12))


class SpanEstimates:
    """``estimate(start, end) == model.estimate(text[start:end])``, for any span of ``text``."""

    __slots__ = ("_boundaries", "_controls", "_counted", "_model", "_non_ascii", "_pairs", "_rates", "_text")

    def __init__(self, text: str, model: TokenModel) -> None:
        self._text = text
        self._model = model
        self._rates = rates = model.ordered
        #: The boundary kinds an estimate adds, with their rates (a rate of 0 adds 0.0: nothing).
        self._boundaries = tuple((code, rates[index]) for code, index in _BOUNDARY_RATES if rates[index])
        self._counted = b""
        self._controls = False
        self._pairs = b""
        #: Positions of the non-ASCII characters of a text with a few of them.
        self._non_ascii: list[int] = []
        if not text:
            return
        if text.isascii():
            ascii_bytes = text.encode()
        else:
            ascii_bytes = text.encode("ascii", "ignore")
            if (len(text) - len(ascii_bytes)) * _FEW_NON_ASCII > len(text) or not ascii_bytes:
                return
            self._non_ascii = [found.start() for found in _NON_ASCII.finditer(text)]
        marked = ascii_bytes.translate(_ASCII_TABLE)
        codes = int.from_bytes(marked)
        self._pairs = (codes | (codes >> 5)).to_bytes(len(marked)).translate(_PAIR_TABLE)
        self._counted = counted = marked.translate(_SPACE_FOR_NEWLINE)
        self._controls = _A_CONTROL in counted

    def estimate(self, start: int, end: int) -> int:
        """The estimate of ``text[start:end]`` (0 for an empty span)."""
        if end <= start:
            return 0
        counted = self._counted
        if not counted:
            return self._model.estimate(self._text[start:end])
        if self._non_ascii:
            before = bisect_left(self._non_ascii, start)
            if bisect_left(self._non_ascii, end, before) > before:  # the span holds one
                return self._model.estimate(self._text[start:end])
            start, end = start - before, end - before  # where the span is without them
        digit, punct = counted.count(_A_DIGIT, start, end), counted.count(_A_PUNCT, start, end)
        space = counted.count(_A_SPACE, start, end)
        control = counted.count(_A_CONTROL, start, end) if self._controls else 0
        letter = end - start - digit - space - punct - control
        # TokenModel.estimate_counts' sum, term by term in the same order, without the
        # terms that add 0.0 (which leaves a float as it is): the non-ASCII classes',
        # control characters' when there are none, and boundaries' at a rate of 0.
        rate = self._rates
        total = digit * rate[0] + space * rate[1] + letter * rate[2] + punct * rate[3]
        if control:
            total += control * rate[8]
        first = _PAIR_TABLE[counted[start]]  # the span's first character follows nothing (code 0)
        after = start + 1
        pairs = self._pairs
        for code, boundary_rate in self._boundaries:
            total += (pairs.count(code, after, end) + (first == code)) * boundary_rate
        return max(1, math.ceil(total - _ROUNDING_SLACK))
