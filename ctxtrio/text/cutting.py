"""Cutting a text to a token budget: a prefix, or the part around a query's best match. Pure.

Used where one item (a document chunk, a session entry) is larger than the whole
budget: rather than nothing, the reader gets the part that matters, with
:data:`CUT_MARK` where text was left out.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .tokens import TokenModel

__all__ = ["CUT_MARK", "cut_around", "cut_to_fit", "whole_words"]

#: Marks where a text was cut (before and after the part shown). ASCII: the cold-start estimate
#: counts "[…]" as 6 tokens and "[...]" as 3, and a search answer can hold eight of them.
CUT_MARK: Final = "[...]"
#: A word, for :func:`whole_words`: two letters or digits.
_WORD: Final = re.compile(r"[^\W_]{2}")


def cut_to_fit(text: str, budget_tokens: int, model: TokenModel) -> str:
    """The longest prefix of ``text`` within ``budget_tokens``, ending at a line break or
    space when one lies in its last fifth."""
    low = model.fitting_prefix(text, budget_tokens)
    if low == len(text):
        return text
    for separator in ("\n", " "):
        at = text.rfind(separator, 0, low)
        if at > low * 4 // 5:
            return text[:at]
    return text[:low]


def cut_around(text: str, query_terms: Sequence[str], budget_tokens: int, model: TokenModel) -> str:
    """The part of ``text`` around its best match of ``query_terms`` that fits ``budget_tokens``.

    The best match is the line holding the most distinct terms (the first such line).
    Whole lines around it are added, alternately after and before, while they fit; a
    line too long for the budget is cut by characters, centred on the term. Cuts are
    marked with :data:`CUT_MARK`. Without a match (or terms) it is the prefix cut.
    """
    spot = _best_match(text, query_terms)
    if spot is None:
        return cut_to_fit(text, budget_tokens, model)
    if model.estimate(text) <= budget_tokens:
        return text
    line_start = text.rfind("\n", 0, spot) + 1
    line_end = text.find("\n", spot)
    line_end = len(text) if line_end < 0 else line_end
    start, end = line_start, line_end
    if _cost(text, start, end, model) > budget_tokens:
        start, end = _centre_chars(text, spot, line_start, line_end, budget_tokens, model)
        return _marked(text, start, end)
    grow_after = True
    while True:
        grown = False
        for after in (grow_after, not grow_after):
            if after and end < len(text):
                nxt = text.find("\n", end + 1)
                candidate = (start, len(text) if nxt < 0 else nxt)
            elif not after and start > 0:
                candidate = (text.rfind("\n", 0, start - 1) + 1, start)
                candidate = (candidate[0], end)
            else:
                continue
            if _cost(text, candidate[0], candidate[1], model) <= budget_tokens:
                start, end = candidate
                grown = True
        grow_after = not grow_after
        if not grown:
            break
    return _marked(text, start, end)


def _marked(text: str, start: int, end: int) -> str:
    return (CUT_MARK + " " if start > 0 else "") + text[start:end] + (" " + CUT_MARK if end < len(text) else "")


def _cost(text: str, start: int, end: int, model: TokenModel) -> int:
    return model.estimate(_marked(text, start, end))


def _centre_chars(text: str, spot: int, low: int, high: int, budget_tokens: int, model: TokenModel) -> tuple[int, int]:
    """The widest [start, end) within [low, high) centred on ``spot`` that fits (binary search on the half-width)."""
    best = (spot, min(high, spot + 1))
    lo, hi = 0, high - low
    while lo <= hi:
        half = (lo + hi) // 2
        start, end = max(low, spot - half), min(high, spot + half + 1)
        if _cost(text, start, end, model) <= budget_tokens:
            best = (start, end)
            lo = half + 1
        else:
            hi = half - 1
    return best


def _best_match(text: str, query_terms: Sequence[str]) -> int | None:
    """Offset of the first term in the line with the most distinct terms, or None."""
    folded = text.casefold()
    if len(folded) != len(text):
        folded = text.lower() if len(text.lower()) == len(text) else text
    best: tuple[int, int] | None = None  # (-distinct terms, offset)
    lines: dict[int, set[str]] = {}
    first_in_line: dict[int, int] = {}
    for term in query_terms:
        at = folded.find(term)
        found = 0
        while at >= 0 and found < 200:
            line = folded.rfind("\n", 0, at) + 1
            lines.setdefault(line, set()).add(term)
            first_in_line[line] = min(first_in_line.get(line, at), at)
            found += 1
            at = folded.find(term, at + len(term))
    for line, seen in lines.items():
        key = (-len(seen), line)
        if best is None or key < best:
            best = key
    return first_in_line[best[1]] if best is not None else None


def whole_words(whole: str, shown: str) -> str:
    """``shown``, characters of ``whole`` between cut marks (:func:`cut_around`'s), without a part of a word
    at either end; "" when no word of two letters or digits is left ('[...] : Tim [...]' says nothing).
    An end keeps its mark, or gains one where a part-word went, and only then: a text shown to its end, or
    whole, given a mark there read as cut ('... the widget section. [...]' of a one-sentence chunk).

    Where the characters shown occur more than once in ``whole``, the occurrence that leaves the fewest
    part-words is taken (the first of those): the first alone, inside a longer word ('timeoutms') where
    the part shown stood on a word's edge ('timeout=30'), cut away a whole word, or the whole hit."""
    core = shown.replace(CUT_MARK, "").strip()
    if not core:
        return shown
    parts = _part_words(whole, core)
    if parts is None:
        return shown
    before, after = shown.startswith(CUT_MARK), shown.endswith(CUT_MARK)
    if parts[0]:
        core, before = (core.partition(" ")[2] if " " in core else ""), True
    if parts[1]:
        core, after = core.rpartition(" ")[0], True
    core = core.strip()
    if not _WORD.search(core):
        return ""
    return (CUT_MARK + " " if before else "") + core + (" " + CUT_MARK if after else "")


def _part_words(whole: str, core: str) -> tuple[bool, bool] | None:
    """Whether ``core``, where it occurs in ``whole``, starts and ends inside a word: of its occurrences, the
    first with the fewest such ends; None when it does not occur."""
    best: tuple[bool, bool] | None = None
    at = whole.find(core)
    while at >= 0:
        end = at + len(core)
        parts = (
            at > 0 and whole[at - 1].isalnum() and core[0].isalnum(),
            end < len(whole) and whole[end].isalnum() and core[-1].isalnum(),
        )
        if best is None or sum(parts) < sum(best):
            best = parts
            if not any(parts):
                break
        at = whole.find(core, at + 1)
    return best
