"""Token estimates: characters per script class times a per-class rate.

There is no universal tokenizer, so ctxtrio estimates: it counts the characters of
each :class:`ScriptClass` and multiplies by a rate in tokens per character. Rates
start from a cold-start guess (:meth:`TokenModel.cold`) and are replaced by measured
ones when calibration has talked to the loaded model (see :class:`TokenModelRef`).
Estimates always round up: undercounting overflows the window this server protects.

Counting is on every hot path (every entry, every chunk, files of many MB), so it
runs without a per-character Python loop:

* ASCII characters are counted on ``str.encode("ascii", "ignore")`` bytes with
  ``bytes.translate`` and ``bytes.count``.
* Han, Hangul and Kana are counted on the UTF-16 high bytes of the text: most
  256-code-point blocks belong to one class entirely (``bytes.translate`` maps each
  unit to its class); the few mixed blocks are resolved with the low bytes, in one
  big-integer AND of two translated byte strings. Astral Han (planes 2 and 3) is
  recognised by its high surrogate.
* Everything else is :attr:`ScriptClass.OTHER`, the remainder, so the counts always
  sum to ``len(text)`` (lone surrogates included).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

__all__ = ["ScriptClass", "TokenModel", "TokenModelRef", "class_counts"]


class ScriptClass(enum.StrEnum):
    """The character classes a token estimate distinguishes."""

    PROSE = "prose"
    """ASCII letters, digits, whitespace and prose punctuation ``. , ; : ' " ! ? ( ) -``."""
    CODE = "code"
    """Other ASCII symbols typical of code: ``{ } [ ] < > = + * / \\ | & ^ % $ # @ ~ ` _``."""
    HAN = "han"
    """CJK ideographs: extension blocks, compatibility ideographs, 々 〆 〇, Hangzhou numerals."""
    HANGUL = "hangul"
    """Hangul syllables and jamo (including compatibility and halfwidth jamo)."""
    KANA = "kana"
    """Hiragana and Katakana (including phonetic extensions and halfwidth Katakana)."""
    OTHER = "other"
    """Everything else: accented Latin, Cyrillic, Greek, Arabic, emoji, CJK punctuation,
    ASCII control characters other than whitespace."""


_CODE_SYMBOLS: Final = b"{}[]<>=+*/\\|&^%$#@~`_"
_WHITESPACE: Final = b" \t\n\r\x0b\x0c"
_ASCII_OTHER: Final = bytes(b for b in range(0x80) if b < 0x20 or b == 0x7F).translate(
    None, _WHITESPACE
)
# One ASCII table: 1 for code symbols, 2 for control characters, 0 for prose.
_ASCII_TABLE: Final = bytes(
    1 if b in _CODE_SYMBOLS else 2 if b in _ASCII_OTHER else 0 for b in range(256)
)

# Class codes used in the byte tables below (0 means "ASCII or OTHER").
_HAN, _HANGUL, _KANA = 1, 2, 3
# Inclusive UTF-16 unit ranges. Astral Han (U+20000..U+3FFFF) is counted through its
# high surrogate D840..D8BF; its low surrogate is left to the OTHER remainder.
# U+4DC0..U+4DFF (Yijing hexagram symbols) share a block with extension A and count
# as Han: rare, and tokenizers split them like ideographs (the estimate leans high).
_UNIT_RANGES: Final[tuple[tuple[int, int, int], ...]] = (
    (0x3005, 0x3007, _HAN),  # 々 〆 〇
    (0x3021, 0x3029, _HAN),  # Hangzhou numerals
    (0x3038, 0x303B, _HAN),
    (0x3400, 0x4DFF, _HAN),  # extension A (+ Yijing hexagrams)
    (0x4E00, 0x9FFF, _HAN),  # unified ideographs
    (0xF900, 0xFAFF, _HAN),  # compatibility ideographs
    (0xD840, 0xD8BF, _HAN),  # high surrogates of planes 2 and 3 (extensions B..H, compat supplement)
    (0x1100, 0x11FF, _HANGUL),  # jamo
    (0x3130, 0x318F, _HANGUL),  # compatibility jamo
    (0xA960, 0xA97F, _HANGUL),  # jamo extended A
    (0xAC00, 0xD7FF, _HANGUL),  # syllables, jamo extended B
    (0xFFA0, 0xFFDC, _HANGUL),  # halfwidth jamo
    (0x3040, 0x30FF, _KANA),  # Hiragana, Katakana
    (0x31F0, 0x31FF, _KANA),  # Katakana phonetic extensions
    (0xFF65, 0xFF9F, _KANA),  # halfwidth Katakana
)


def _build_tables() -> tuple[bytes, bytes, bytes, bytes]:
    """Return the tables that classify UTF-16 units by their high and low bytes.

    A 256-code-point block (one high byte) is *pure* when all of it is one class; the
    pure table maps its high byte to that class. Each (mixed block, class) pair gets a
    bit: the tag table maps a mixed block's high byte to the bits of its pairs, the
    low table maps a low byte to the bits of the pairs it belongs to, so ``tag & low``
    holds exactly one bit for a CJK unit of a mixed block (zero otherwise), and the
    bit table maps that bit back to the class.
    """
    unit_class = bytearray(0x10000)
    for first, last, code in _UNIT_RANGES:
        unit_class[first : last + 1] = bytes([code]) * (last + 1 - first)
    pure, tag, low, bit_class = bytearray(256), bytearray(256), bytearray(256), bytearray(256)
    pairs = 0
    for hi in range(256):
        block = unit_class[hi * 256 : (hi + 1) * 256]
        if len(set(block)) == 1:
            pure[hi] = block[0]
            continue
        for code in sorted(set(block) - {0}):
            bit = 1 << pairs
            pairs += 1
            tag[hi] |= bit
            bit_class[bit] = code
            for lo in range(256):
                if block[lo] == code:
                    low[lo] |= bit
    assert pairs <= 8, "every (mixed block, class) pair needs its own bit"
    return bytes(pure), bytes(tag), bytes(low), bytes(bit_class)


_PURE_TABLE, _TAG_TABLE, _LOW_TABLE, _BIT_CLASS_TABLE = _build_tables()


def _counts(text: str) -> tuple[int, int, int, int, int, int]:
    """Return (prose, code, han, hangul, kana, other) character counts."""
    if text.isascii():
        marked = text.encode().translate(_ASCII_TABLE)
        code = marked.count(1)
        ascii_other = marked.count(2)
        return len(text) - code - ascii_other, code, 0, 0, 0, ascii_other
    ascii_bytes = text.encode("ascii", "ignore")
    marked = ascii_bytes.translate(_ASCII_TABLE)
    code = marked.count(1)
    ascii_other = marked.count(2)
    prose = len(ascii_bytes) - code - ascii_other
    han, hangul, kana = _cjk_counts(text.encode("utf-16-be", "surrogatepass"))
    other = len(text) - len(ascii_bytes) - han - hangul - kana + ascii_other
    return prose, code, han, hangul, kana, other


def _cjk_counts(units: bytes) -> tuple[int, int, int]:
    """Count Han, Hangul and Kana units in UTF-16-BE ``units``."""
    high = units[0::2]
    classes = high.translate(_PURE_TABLE)
    han, hangul, kana = classes.count(_HAN), classes.count(_HANGUL), classes.count(_KANA)
    tags = int.from_bytes(high.translate(_TAG_TABLE))
    if tags:  # some unit lies in a block where a CJK class is mixed with others
        hits = tags & int.from_bytes(units[1::2].translate(_LOW_TABLE))
        classes = hits.to_bytes(len(high)).translate(_BIT_CLASS_TABLE)
        han += classes.count(_HAN)
        hangul += classes.count(_HANGUL)
        kana += classes.count(_KANA)
    return han, hangul, kana


_CLASS_ORDER: Final = (
    ScriptClass.PROSE,
    ScriptClass.CODE,
    ScriptClass.HAN,
    ScriptClass.HANGUL,
    ScriptClass.KANA,
    ScriptClass.OTHER,
)


def class_counts(text: str) -> dict[ScriptClass, int]:
    """Return the number of characters of each class in ``text``.

    Every class is present (zero when absent); the counts sum to ``len(text)``.
    """
    return dict(zip(_CLASS_ORDER, _counts(text), strict=True))


# Products like 100 * 0.27 land a hair above the exact value in binary floating
# point; forgive that much before rounding up so exact products are not bumped by one.
_ROUNDING_SLACK: Final = 1e-9


@dataclass(frozen=True, slots=True)
class TokenModel:
    """Rates in tokens per character for every :class:`ScriptClass`.

    ``rates`` must name every class with a finite, non-negative rate; it is copied
    into a read-only mapping. ``source`` says where the rates came from, for people.
    """

    rates: Mapping[ScriptClass, float]
    source: str
    _ordered: tuple[float, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        missing = [cls.value for cls in ScriptClass if cls not in self.rates]
        if missing:
            raise ValueError(f"TokenModel rates miss classes: {', '.join(missing)}")
        ordered = tuple(float(self.rates[cls]) for cls in _CLASS_ORDER)
        if not all(math.isfinite(rate) and rate >= 0.0 for rate in ordered):
            raise ValueError(f"TokenModel rates must be finite and >= 0: {ordered}")
        frozen = MappingProxyType(dict(zip(_CLASS_ORDER, ordered, strict=True)))
        object.__setattr__(self, "rates", frozen)
        object.__setattr__(self, "_ordered", ordered)

    def estimate(self, text: str) -> int:
        """Return the estimated token count of ``text``, rounded up.

        ``""`` is 0 tokens; any non-empty text is at least 1.
        """
        if not text:
            return 0
        prose, code, han, hangul, kana, other = _counts(text)
        r_prose, r_code, r_han, r_hangul, r_kana, r_other = self._ordered
        total = (
            prose * r_prose
            + code * r_code
            + han * r_han
            + hangul * r_hangul
            + kana * r_kana
            + other * r_other
        )
        return max(1, math.ceil(total - _ROUNDING_SLACK))

    def fitting_prefix(self, text: str, max_tokens: int) -> int:
        """Length of the longest prefix of ``text`` whose estimate is within ``max_tokens``.

        Estimates only grow as text grows, so a binary search finds it in
        ``log2(len(text))`` estimates. Callers choose where to actually cut (a word,
        a line) within that length.
        """
        if self.estimate(text) <= max_tokens:
            return len(text)
        low, high = 0, len(text)  # text[:low] fits, text[:high] does not
        while high - low > 1:
            middle = (low + high) // 2
            if self.estimate(text[:middle]) <= max_tokens:
                low = middle
            else:
                high = middle
        return low

    @classmethod
    def cold(cls, ratio: float = 0.27) -> TokenModel:
        """Return the cold-start model: ``ratio`` for PROSE, CODE and OTHER, 1.0 for CJK."""
        dense = {ScriptClass.HAN, ScriptClass.HANGUL, ScriptClass.KANA}
        rates = {sc: 1.0 if sc in dense else ratio for sc in ScriptClass}
        return cls(rates, f"cold start: {ratio:g} tokens/char, 1.0 for CJK/Hangul/Kana")


class TokenModelRef:
    """Holds the current TokenModel; the calibration task replaces `current` when it measures the loaded model.

    Readers take ``ref.current`` once per operation and use that snapshot throughout,
    so one chunking or packing pass never mixes two models. Assignment of the
    attribute is atomic; no lock is needed.
    """

    __slots__ = ("current",)

    current: TokenModel

    def __init__(self, model: TokenModel) -> None:
        self.current = model

    def __repr__(self) -> str:
        return f"TokenModelRef({self.current!r})"
