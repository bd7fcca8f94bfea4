"""Character classes and boundaries of a text, counted for token estimates (:mod:`.tokens`).

Counting is on every hot path (every entry, every chunk, files of many MB), so it
runs without a per-character Python loop:

* ASCII characters are counted on ``str.encode("ascii", "ignore")`` bytes with
  ``bytes.translate`` and ``bytes.count``; boundaries in one more pass: the class
  codes become one big integer, OR-ed with itself shifted by five bits, which puts
  each character's code next to its predecessor's in one byte (a pair code); one
  ``translate`` maps pair codes to boundary kinds, counted like classes
  (``stress/bench_tokens.py`` measures the speed and checks the counts against an
  older revision).
* Latin-1 letters (U+00C0..U+00FF) are counted on ``str.encode("latin-1", "ignore")``.
* Han, Hangul, Kana and other letters are counted on the UTF-16 high bytes of the
  text: most 256-code-point blocks belong to one class entirely (``bytes.translate``
  maps each unit to its class); the few mixed blocks are resolved with the low bytes,
  in one big-integer AND of two translated byte strings. Astral Han (planes 2 and 3)
  is recognised by its high surrogate.
* Everything else is :attr:`ScriptClass.SYMBOL`, the remainder (emoji, CJK and general
  punctuation, arrows, box drawing, other astral characters, ASCII controls), so the
  character counts always sum to ``len(text)`` (lone surrogates included). The
  remainder gets the highest rate: what is not recognised is assumed expensive.
"""

from __future__ import annotations

import enum
from typing import Final

__all__ = ["CHARACTER_CLASSES", "ScriptClass", "class_counts"]


class ScriptClass(enum.StrEnum):
    """What a token estimate counts: nine character classes, then four kinds of boundary.

    The character classes partition every text; the boundaries are counted on top.
    """

    DIGIT = "digit"
    """ASCII digits 0-9."""
    SPACE = "space"
    """ASCII whitespace: space, tab, newline, carriage return, vertical tab, form feed."""
    LETTER = "letter"
    """ASCII letters a-z and A-Z."""
    PUNCT = "punct"
    """ASCII punctuation and symbols (everything printable that is not a letter, digit or space)."""
    HAN = "han"
    """CJK ideographs: extension blocks, compatibility ideographs, 々 〆 〇, Hangzhou numerals."""
    HANGUL = "hangul"
    """Hangul syllables and jamo (including compatibility and halfwidth jamo)."""
    KANA = "kana"
    """Hiragana and Katakana (including phonetic extensions and halfwidth Katakana)."""
    LETTER_OTHER = "letter_other"
    """Other letters: Latin-1 and Latin extended, Greek, Cyrillic, Armenian, Hebrew, Arabic,
    Indic, Thai, Georgian, Ethiopic, Vietnamese (U+00C0..U+10FF, U+1200..U+1FFF)."""
    SYMBOL = "symbol"
    """Everything else: emoji, symbols, general and CJK punctuation, ASCII controls."""
    PUNCT_RUN = "punct_run"
    """Boundary: a run of ASCII punctuation starts (``", "`` and ``"}}"`` are one each)."""
    SPACE_RUN = "space_run"
    """Boundary: a run of ASCII whitespace starts."""
    WORD_BREAK = "word_break"
    """Boundary inside an ASCII word: letter→digit, digit→letter, lower→upper case
    (``a1b2``, ``getUser``: where random ids and base64 split into many tokens)."""
    INDENT = "indent"
    """Boundary: a line break followed by other whitespace (the indentation of code,
    pretty-printed JSON and YAML: the break and the indentation are two tokens where a
    single space between words is none)."""


#: The classes that partition a text: their counts sum to ``len(text)``.
CHARACTER_CLASSES: Final = tuple(ScriptClass)[:9]

# One ASCII table: the code of every byte (only 0..127 occur).
# A line feed has a code of its own (it is whitespace all the same); codes fit in 3 bits.
_A_DIGIT, _A_SPACE, _A_LOWER, _A_UPPER, _A_PUNCT, _A_CONTROL, _A_NEWLINE = 1, 2, 3, 4, 5, 6, 7


def _ascii_code(b: int) -> int:
    char = chr(b)
    if b >= 0x80:
        return 0
    if char.isdigit():
        return _A_DIGIT
    if char == "\n":
        return _A_NEWLINE
    if char in " \t\r\x0b\x0c":
        return _A_SPACE
    if char.islower():
        return _A_LOWER
    if char.isupper():
        return _A_UPPER
    return _A_PUNCT if char.isprintable() else _A_CONTROL


_ASCII_TABLE: Final = bytes(_ascii_code(b) for b in range(256))


def _pair_code(previous: int, current: int) -> int:
    """The boundary between two ASCII codes: 1 a punctuation run starts, 2 a whitespace
    run, 3 a word break, 4 an indentation (whitespace after a line feed)."""
    letters, spaces = (_A_LOWER, _A_UPPER), (_A_SPACE, _A_NEWLINE)
    if current == _A_PUNCT != previous:
        return 1
    if current in spaces and previous not in spaces:
        return 2
    if (previous, current) == (_A_NEWLINE, _A_SPACE):
        return 4
    if (previous in letters and current == _A_DIGIT) or (previous == _A_DIGIT and current in letters):
        return 3
    return 3 if (previous, current) == (_A_LOWER, _A_UPPER) else 0


# Indexed by ``8 * previous code + current code`` (codes are below 8; the code before
# the first character is 0, so a leading run counts as starting).
_PAIR_TABLE: Final = bytes(_pair_code(pair >> 3, pair & 7) for pair in range(256))
_PUNCT_START, _SPACE_START, _WORD_BREAK, _INDENT = 1, 2, 3, 4
# Latin-1 letters À..ÿ except × and ÷.
_LATIN1_LETTER: Final = bytes(1 if b >= 0xC0 and b not in (0xD7, 0xF7) else 0 for b in range(256))

# Class codes used in the byte tables below (0 means "ASCII, Latin-1 or SYMBOL").
_HAN, _HANGUL, _KANA, _LETTER = 1, 2, 3, 4
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
    (0x0100, 0x10FF, _LETTER),  # Latin extended .. Georgian (incl. combining marks)
    (0x1200, 0x1FFF, _LETTER),  # Ethiopic .. Greek extended (Vietnamese in 1E00..1EFF)
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


_Counts = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]


def _counts(text: str) -> _Counts:
    """Counts in :class:`ScriptClass` order."""
    ascii_bytes = text.encode("ascii", "ignore") if not text.isascii() else text.encode()
    marked = ascii_bytes.translate(_ASCII_TABLE)
    # Letters, the most frequent class, are what is left: ``bytes.count`` is slowest on
    # frequent bytes (a mispredicted branch per hit).
    digit, punct = marked.count(_A_DIGIT), marked.count(_A_PUNCT)
    space = marked.count(_A_SPACE) + marked.count(_A_NEWLINE)
    control = marked.count(_A_CONTROL)
    letter = len(ascii_bytes) - digit - space - punct - control
    # One pass for every boundary: as a big-endian integer, ``codes >> 5`` moves each
    # byte's code (3 bits) into bits 3..5 of the next byte, so byte i of the OR is the
    # pair code ``8 * code[i-1] + code[i]``. Not subadditive across a join inside a
    # word ("get" + "User"): packing joins its parts with line breaks, where no break is lost.
    codes = int.from_bytes(marked)
    pairs = (codes | (codes >> 5)).to_bytes(len(marked)).translate(_PAIR_TABLE)
    punct_runs, space_runs = pairs.count(_PUNCT_START), pairs.count(_SPACE_START)
    breaks, indents = pairs.count(_WORD_BREAK), pairs.count(_INDENT)
    if len(ascii_bytes) == len(text):
        return digit, space, letter, punct, 0, 0, 0, 0, control, punct_runs, space_runs, breaks, indents
    latin1 = text.encode("latin-1", "ignore").translate(_LATIN1_LETTER).count(1)
    han, hangul, kana, other = _cjk_counts(text.encode("utf-16-be", "surrogatepass"))
    other += latin1
    symbol = len(text) - len(ascii_bytes) - han - hangul - kana - other + control
    return digit, space, letter, punct, han, hangul, kana, other, symbol, punct_runs, space_runs, breaks, indents


def _cjk_counts(units: bytes) -> tuple[int, int, int, int]:
    """Count Han, Hangul, Kana and other-letter units in UTF-16-BE ``units``."""
    high = units[0::2]
    classes = high.translate(_PURE_TABLE)
    han, hangul, kana = classes.count(_HAN), classes.count(_HANGUL), classes.count(_KANA)
    letter = classes.count(_LETTER)
    tags = int.from_bytes(high.translate(_TAG_TABLE))
    if tags:  # some unit lies in a block where a CJK class is mixed with others
        hits = tags & int.from_bytes(units[1::2].translate(_LOW_TABLE))
        classes = hits.to_bytes(len(high)).translate(_BIT_CLASS_TABLE)
        han += classes.count(_HAN)
        hangul += classes.count(_HANGUL)
        kana += classes.count(_KANA)
    return han, hangul, kana, letter


_CLASS_ORDER: Final = tuple(ScriptClass)


def class_counts(text: str) -> dict[ScriptClass, int]:
    """Return the count of every :class:`ScriptClass` in ``text``.

    Every class is present (zero when absent); the counts of :data:`CHARACTER_CLASSES`
    sum to ``len(text)``.
    """
    return dict(zip(_CLASS_ORDER, _counts(text), strict=True))
