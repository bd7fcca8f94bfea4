"""The passage around a span of a text: for a search hit found by meaning. Pure.

Semantic recall knows which characters of a chunk matched the query (the embedded part
nearest it); the query's words may be nowhere in them, so the keyword window of
:func:`~ctxtrio.text.passages.best_passage` cannot find them. :func:`passage_around`
returns the whole lines holding the span, grown by whole lines on both sides while they
fit; when the span's lines alone are too long (an unwrapped paragraph), the characters
from the span's start that fit, ended at a word.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .cutting import CUT_MARK
from .passages import Passage, marked_text

if TYPE_CHECKING:
    from .tokens import TokenModel

__all__ = ["passage_around"]


def passage_around(
    text: str, span: tuple[int, int], budget_tokens: int, model: TokenModel, tokens_per_char: float | None = None
) -> Passage | None:
    """The lines of ``text`` around characters ``span`` within ``budget_tokens`` (cut marks
    counted), or None when not even a few characters fit. Lines are sized at
    ``tokens_per_char`` (default: the text's average), the result checked as a whole."""
    start, end = max(0, min(span[0], len(text))), max(0, min(span[1], len(text)))
    if end <= start:
        return None
    rate = tokens_per_char if tokens_per_char is not None else model.estimate(text) / max(1, len(text))
    room = budget_tokens - 2 * model.estimate(CUT_MARK + " ")
    if room <= 0:
        return None
    bounds = _line_bounds(text)
    first = _line_of(bounds, start)
    last = _line_of(bounds, end - 1)
    used = sum(_line_cost(bounds, n, rate) for n in range(first, last + 1))
    if used > room:
        return _characters(text, bounds, start, room, budget_tokens, model, rate)
    core = (first, last)
    first, last = _grow(bounds, first, last, used, room, rate)
    while True:
        passage = _passage(text, bounds, first, last)
        if model.estimate(marked_text(text, passage)) <= budget_tokens:
            return passage
        if last > core[1]:
            last -= 1
        elif first < core[0]:
            first += 1
        elif last > first:
            last -= 1
        else:
            return _characters(text, bounds, start, room, budget_tokens, model, rate)


def _line_cost(bounds: list[tuple[int, int]], n: int, rate: float) -> int:
    """Tokens of line ``n`` (its break counted) at ``rate`` tokens a character."""
    return math.ceil((bounds[n][1] - bounds[n][0] + 1) * rate)


def _grow(bounds: list[tuple[int, int]], first: int, last: int, used: int, room: int, rate: float) -> tuple[int, int]:
    """Lines ``first``..``last`` grown by one line before, one after, in turn, while they fit ``room``."""
    before = True
    while True:
        grown = False
        for take_before in (before, not before):
            n = first - 1 if take_before else last + 1
            if 0 <= n < len(bounds) and used + _line_cost(bounds, n, rate) <= room:
                used += _line_cost(bounds, n, rate)
                first, last = (n, last) if take_before else (first, n)
                grown = True
                break
        if not grown:
            return first, last
        before = not before


def _line_bounds(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line, the line break excluded."""
    bounds: list[tuple[int, int]] = []
    at = 0
    while True:
        newline = text.find("\n", at)
        if newline < 0:
            bounds.append((at, len(text)))
            return bounds
        bounds.append((at, newline))
        at = newline + 1


def _line_of(bounds: list[tuple[int, int]], position: int) -> int:
    low, high = 0, len(bounds) - 1
    while low < high:  # the last line starting at or before position
        middle = (low + high + 1) // 2
        if bounds[middle][0] <= position:
            low = middle
        else:
            high = middle - 1
    return low


def _passage(text: str, bounds: list[tuple[int, int]], first: int, last: int) -> Passage:
    """Lines ``first`` .. ``last`` (0-based) without blank lines at either end."""
    while first < last and not text[bounds[first][0] : bounds[first][1]].strip():
        first += 1
    while last > first and not text[bounds[last][0] : bounds[last][1]].strip():
        last -= 1
    start, end = bounds[first][0], bounds[last][1]
    return Passage(
        start, end, first + 1, last + 1, len(bounds),
        cut_before=bool(text[:start].strip()), cut_after=bool(text[end:].strip()),
    )  # fmt: skip


def _characters(
    text: str, bounds: list[tuple[int, int]], start: int, room: int, budget_tokens: int, model: TokenModel, rate: float
) -> Passage | None:
    """The characters from ``start`` that fit, ended after a word; None when fewer than a word fit."""
    chars = int(room / max(rate, 1e-6))
    while chars > 8:
        end = min(len(text), start + chars)
        if end < len(text):
            space = text.rfind(" ", start + chars // 2, end)
            end = space if space > start else end
        passage = Passage(
            start, end, _line_of(bounds, start) + 1, _line_of(bounds, max(start, end - 1)) + 1, len(bounds),
            cut_before=bool(text[:start].strip()), cut_after=bool(text[end:].strip()),
        )  # fmt: skip
        if model.estimate(marked_text(text, passage)) <= budget_tokens:
            return passage
        chars = chars * 9 // 10
    return None
