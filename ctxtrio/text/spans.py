"""Token estimates of many spans of one text, without encoding the text again for each.

Chunking estimates every block of a document and then every chunk
(:mod:`ctxtrio.text.chunking`): about 100 spans per stdlib file, most of them a few
hundred characters, where :meth:`TokenModel.estimate` spends more on encoding and
translating its argument than on counting. :class:`SpanEstimates` classifies an ASCII
text once, as :func:`~ctxtrio.text.char_classes._counts` does: one class code per character
and one boundary code per character (with its predecessor), and then counts a span with
``bytes.count(code, start, end)`` on those two strings. A span's first boundary is the
one thing that differs from the whole text's (its predecessor is the span's edge, code
0, not the character before it), and is corrected for. The counts are those
``_counts(text[start:end])`` gives, so every estimate equals ``model.estimate(text[start:end])``
(``tests/text/test_spans.py`` holds this on every span of real files).

A text with a few non-ASCII characters (source code with a name or a symbol in a
comment) is classified the same way without them, as ``_counts`` does (it drops them
before classifying): a span without any is counted there, its ends moved left by the
non-ASCII characters before it; a span with some is counted there too (its ends each moved
left by the non-ASCII characters before it), plus its non-ASCII characters' classes, taken
from those characters alone classified as below.

A text with many (CJK, Hangul, Cyrillic) is classified per character as well: its ASCII
characters as above (a span's are those between its ends moved left by the non-ASCII
characters before them, found from a running count every 1,024 characters), its other
characters by the UTF-16 tables ``_cjk_counts`` uses, one class code per UTF-16 unit (an
astral character is two; their positions map a character to its unit), so a span's Han,
Hangul, Kana and other letters are ``bytes.count`` too. Both sum the counts with
:meth:`TokenModel.estimate_counts`, the model's own sum.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from itertools import accumulate
from typing import TYPE_CHECKING, Final

from .char_classes import (
    _A_CONTROL,
    _A_DIGIT,
    _A_NEWLINE,
    _A_PUNCT,
    _A_SPACE,
    _ASCII_TABLE,
    _BIT_CLASS_TABLE,
    _HAN,
    _HANGUL,
    _INDENT,
    _KANA,
    _LATIN1_LETTER,
    _LETTER,
    _LOW_TABLE,
    _PAIR_TABLE,
    _PUNCT_START,
    _PURE_TABLE,
    _SPACE_START,
    _TAG_TABLE,
    _WORD_BREAK,
)
from .tokens import _ROUNDING_SLACK

if TYPE_CHECKING:
    from .tokens import TokenModel

__all__ = ["SpanEstimates"]


#: Above one non-ASCII character in this many, every span of a text is estimated on its own.
_FEW_NON_ASCII: Final = 64
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")
_ASTRAL: Final = re.compile("[\U00010000-\U0010ffff]")
#: Class codes as counted: a line feed is whitespace like any other (pairs still tell it apart,
#: and as a span's first character it starts a whitespace run all the same).
_SPACE_FOR_NEWLINE: Final = bytes(_A_SPACE if code == _A_NEWLINE else code for code in range(256))
#: Boundary kinds (pair codes) and their rates' places in :attr:`TokenModel.ordered`, in the sum's order.
_BOUNDARY_RATES: Final = ((_PUNCT_START, 9), (_SPACE_START, 10), (_WORD_BREAK, 11), (_INDENT, 12))
#: UTF-16 high bytes: 1 for 0 (with a Latin-1 letter's low byte: a Latin-1 letter), and 1 for
#: any other (the character is not ASCII); low bytes: 1 from 0x80 (not ASCII either).
_HIGH_ZERO: Final = bytes([1]) + bytes(255)
_HIGH_NONZERO: Final = bytes([0]) + bytes([1]) * 255
_LOW_HIGH_BIT: Final = bytes(128) + bytes([1]) * 128
#: Characters per entry of :class:`_Wide`'s running count of non-ASCII characters, and of :class:`_Blocks`'.
_BLOCK: Final = 1024
#: Spans at least this long are counted from :class:`_Blocks` (shorter ones cost less scanned whole).
_LONG_SPAN: Final = 4 * _BLOCK
#: A text's :class:`_Blocks` are made once its long spans have been scanned for this many times its length.
_BLOCKS_AFTER: Final = 1


class SpanEstimates:
    """``estimate(start, end) == model.estimate(text[start:end])``, for any span of ``text``."""

    __slots__ = (
        "_blocks",
        "_boundaries",
        "_controls",
        "_counted",
        "_few",
        "_long_scanned",
        "_model",
        "_non_ascii",
        "_pairs",
        "_rates",
        "_wide",
    )

    def __init__(self, text: str, model: TokenModel) -> None:
        self._model = model
        self._rates = rates = model.ordered
        #: The boundary kinds an estimate adds, with their rates (a rate of 0 adds 0.0: nothing).
        self._boundaries = tuple((code, rates[index]) for code, index in _BOUNDARY_RATES if rates[index])
        self._counted = b""
        self._controls = False
        self._pairs = b""
        self._blocks: tuple[_Blocks, _Blocks] | None = None
        self._long_scanned = 0  # characters of long spans counted without the blocks
        #: Positions of the non-ASCII characters of a text with a few of them.
        self._non_ascii: list[int] = []
        #: The classes of those characters alone, in order.
        self._few: _Wide | None = None
        #: The per-character classes of a text with many non-ASCII characters.
        self._wide: _Wide | None = None
        if not text:
            return
        if text.isascii():
            ascii_bytes = text.encode()
        else:
            ascii_bytes = text.encode("ascii", "ignore")
            if (len(text) - len(ascii_bytes)) * _FEW_NON_ASCII > len(text) or not ascii_bytes:
                self._wide = _Wide.of(text)
            else:
                self._non_ascii = [found.start() for found in _NON_ASCII.finditer(text)]
                self._few = _Wide.of("".join(_NON_ASCII.findall(text)))
        marked = ascii_bytes.translate(_ASCII_TABLE)
        codes = int.from_bytes(marked)
        self._pairs = (codes | (codes >> 5)).to_bytes(len(marked)).translate(_PAIR_TABLE)
        self._counted = counted = marked.translate(_SPACE_FOR_NEWLINE)
        self._controls = _A_CONTROL in counted

    def estimate(self, start: int, end: int) -> int:
        """The estimate of ``text[start:end]`` (0 for an empty span)."""
        if end <= start:
            return 0
        if self._wide is not None:
            return self._wide_estimate(start, end)
        if self._non_ascii:
            before = bisect_left(self._non_ascii, start)
            after = bisect_left(self._non_ascii, end, before)
            if after > before:  # the span holds some
                return self._few_estimate(start, end, before, after)
            start, end = start - before, end - before  # where the span is without them
        digit, space, letter, punct, control = self._ascii_classes(start, end)
        # TokenModel.estimate_counts' sum, term by term in the same order, without the
        # terms that add 0.0 (which leaves a float as it is): the non-ASCII classes',
        # control characters' when there are none, and boundaries' at a rate of 0.
        rate = self._rates
        total = digit * rate[0] + space * rate[1] + letter * rate[2] + punct * rate[3]
        if control:
            total += control * rate[8]
        return max(1, math.ceil(self._plus_boundaries(total, start, end) - _ROUNDING_SLACK))

    def _ascii_classes(self, start: int, end: int) -> tuple[int, int, int, int, int]:
        """Digits, spaces, letters, punctuation and controls of a span of the ASCII-only text."""
        blocks = self._long(end - start) if end - start >= _LONG_SPAN else None
        count = self._counted.count if blocks is None else blocks[0].count
        digit, punct = count(_A_DIGIT, start, end), count(_A_PUNCT, start, end)
        space = count(_A_SPACE, start, end)
        control = count(_A_CONTROL, start, end) if self._controls else 0
        return digit, space, end - start - digit - space - punct - control, punct, control

    def _plus_boundaries(self, total: float, start: int, end: int) -> float:
        """``total`` plus the boundaries' terms of a non-empty span of the ASCII-only text, in the sum's order."""
        first = _PAIR_TABLE[self._counted[start]]  # the span's first character follows nothing (code 0)
        after = start + 1
        count = self._pairs.count if self._blocks is None or end - start < _LONG_SPAN else self._blocks[1].count
        for code, boundary_rate in self._boundaries:
            total += (count(code, after, end) + (first == code)) * boundary_rate
        return total

    def _long(self, length: int) -> tuple[_Blocks, _Blocks] | None:
        """The block counts of the class codes and of the boundary codes, made once long spans have
        been scanned for as many characters as the text has (a text probed once or twice scans less
        without them: Java's files, most of whose long spans are a big block's first estimate)."""
        if self._blocks is None:
            self._long_scanned += length
            if self._long_scanned >= _BLOCKS_AFTER * len(self._counted):
                classes = _Blocks(self._counted, (_A_DIGIT, _A_PUNCT, _A_SPACE, _A_CONTROL))
                self._blocks = classes, _Blocks(self._pairs, tuple(code for code, _ in _BOUNDARY_RATES))
        return self._blocks

    def _few_estimate(self, start: int, end: int, before: int, after: int) -> int:
        """:meth:`estimate` of a span holding the few non-ASCII characters ``before`` to ``after``
        (their numbers in the text): its ASCII characters are the ASCII-only text's between the
        ends moved left by the non-ASCII characters before them, its other classes those of its
        non-ASCII characters in ``_few`` (them alone, in order).

        Chunking probes long spans of a source file that holds a name or a symbol in a comment
        (Go's tests and tables): encoding each such span again was half of Go's chunking CPU."""
        few = self._few
        assert few is not None
        return self._with_classes(start, end, start - before, end - after, few.counts(before, after))

    def _wide_estimate(self, start: int, end: int) -> int:
        """:meth:`estimate` of a span of a text with many non-ASCII characters: its ASCII
        characters are the ASCII-only text's between the ends moved left by the non-ASCII
        characters before them (what ``_counts`` counts), its other classes per character."""
        wide = self._wide
        assert wide is not None
        ascii_start, ascii_end = start - wide.before(start), end - wide.before(end)
        return self._with_classes(start, end, ascii_start, ascii_end, wide.counts(start, end))

    def _with_classes(
        self, start: int, end: int, ascii_start: int, ascii_end: int, classes: tuple[int, int, int, int]
    ) -> int:
        """The estimate of a span from its ASCII characters' span of the ASCII-only text and its
        Han, Hangul, Kana and other letters: ``_counts``' counts of its text, summed by the model
        itself (so the float sum is the one :meth:`TokenModel.estimate` makes)."""
        digit = space = letter = punct = control = 0
        boundaries = [0, 0, 0, 0]
        if ascii_end > ascii_start:
            digit, space, letter, punct, control = self._ascii_classes(ascii_start, ascii_end)
            first = _PAIR_TABLE[self._counted[ascii_start]]  # the span's first character follows nothing
            long = ascii_end - ascii_start >= _LONG_SPAN
            count = self._pairs.count if self._blocks is None or not long else self._blocks[1].count
            for place, (code, _index) in enumerate(_BOUNDARY_RATES):
                boundaries[place] = count(code, ascii_start + 1, ascii_end) + (first == code)
        han, hangul, kana, other = classes
        symbol = end - start - (ascii_end - ascii_start) - han - hangul - kana - other + control
        return self._model.estimate_counts((digit, space, letter, punct, han, hangul, kana, other, symbol, *boundaries))


class _Blocks:
    """One code string's count of each of ``codes`` before every multiple of :data:`_BLOCK`, so a
    long span's count is a difference of two of those plus the counts of its two ragged ends:
    chunking's probes of 12,800 characters (:func:`~ctxtrio.text.chunking._hard_split`) scan
    2,048 characters at most instead of all of them, however often the same text is probed."""

    __slots__ = ("_before", "_data")

    def __init__(self, data: bytes, codes: tuple[int, ...]) -> None:
        self._data = data
        starts = range(0, len(data), _BLOCK)
        self._before = {
            code: list(accumulate((data.count(code, at, at + _BLOCK) for at in starts), initial=0)) for code in codes
        }

    def count(self, code: int, start: int, end: int) -> int:
        """``data.count(code, start, end)``."""
        first, last = -(-start // _BLOCK), end // _BLOCK  # the whole blocks inside the span
        if first >= last:
            return self._data.count(code, start, end)
        before, data = self._before[code], self._data
        return (
            before[last]
            - before[first]
            + data.count(code, start, first * _BLOCK)
            + data.count(code, last * _BLOCK, end)
        )


class _Wide:
    """Per character of a text, what ``_counts`` counts on its non-ASCII characters, so a
    span's counts are ``bytes.count``: per UTF-16 unit, as ``_cjk_counts`` counts, an astral
    character being two (its positions map characters to units)."""

    __slots__ = ("_astral", "_blocks", "_latin", "_mixed", "_non_ascii", "_pure")

    def __init__(self, pure: bytes, mixed: bytes, latin: bytes, non_ascii: bytes, astral: list[int]) -> None:
        self._pure = pure  # the class of a unit in a block of one class (``_cjk_counts``)
        self._mixed = mixed  # Han, Hangul or Kana in a mixed block, or b"" when there is none
        self._latin = latin  # 1 for a Latin-1 letter
        self._non_ascii = non_ascii  # 1 for a unit of a non-ASCII character
        self._astral = astral  # the positions of the astral characters, in characters
        #: Non-ASCII units before each multiple of :data:`_BLOCK`.
        self._blocks = [0]
        for position in range(0, len(non_ascii), _BLOCK):
            self._blocks.append(self._blocks[-1] + non_ascii.count(1, position, position + _BLOCK))

    @classmethod
    def of(cls, text: str) -> _Wide:
        """The classes of ``text``'s characters."""
        units = text.encode("utf-16-be", "surrogatepass")
        astral = [found.start() for found in _ASTRAL.finditer(text)] if len(units) != 2 * len(text) else []
        high, low = units[0::2], units[1::2]
        size = len(high)
        tags = int.from_bytes(high.translate(_TAG_TABLE))
        mixed = b""
        if tags:
            mixed = (tags & int.from_bytes(low.translate(_LOW_TABLE))).to_bytes(size).translate(_BIT_CLASS_TABLE)
        latin = int.from_bytes(high.translate(_HIGH_ZERO)) & int.from_bytes(low.translate(_LATIN1_LETTER))
        non_ascii = int.from_bytes(high.translate(_HIGH_NONZERO)) | int.from_bytes(low.translate(_LOW_HIGH_BIT))
        return cls(high.translate(_PURE_TABLE), mixed, latin.to_bytes(size), non_ascii.to_bytes(size), astral)

    def _unit(self, position: int) -> int:
        """The UTF-16 unit where character ``position`` starts."""
        return position + bisect_left(self._astral, position) if self._astral else position

    def before(self, position: int) -> int:
        """Non-ASCII characters before ``position``: their units less the astral characters' second ones."""
        unit = self._unit(position)
        block = unit // _BLOCK
        return self._blocks[block] + self._non_ascii.count(1, block * _BLOCK, unit) - (unit - position)

    def counts(self, start: int, end: int) -> tuple[int, int, int, int]:
        """Han, Hangul, Kana and other letters (``_cjk_counts`` plus Latin-1 letters) of a span."""
        start, end = self._unit(start), self._unit(end)
        pure, mixed = self._pure, self._mixed
        han, hangul, kana = pure.count(_HAN, start, end), pure.count(_HANGUL, start, end), pure.count(_KANA, start, end)
        if mixed:
            han += mixed.count(_HAN, start, end)
            hangul += mixed.count(_HANGUL, start, end)
            kana += mixed.count(_KANA, start, end)
        return han, hangul, kana, pure.count(_LETTER, start, end) + self._latin.count(1, start, end)
