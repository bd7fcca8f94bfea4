"""Query words that stand next to each other in a text as in the query, for :mod:`.passages`. Pure.

A window is chosen by the words its headings lack (``VACUUM`` is the page's name, so the
window of sql-vacuum looks for ``lock``, ``full``, ``take``), but a sentence that writes
the words as asked (``VACUUM FULL rewrites ... ACCESS EXCLUSIVE lock``) names the thing
asked about, and another that holds the same looked-for words (``Plain VACUUM (without
FULL) ... an exclusive lock is not obtained``) does not. :func:`asked_phrases` finds
those phrases in prose only: an example's command line or a code span repeats the
words in another sense (``git format-patch --cover-letter --range-diff=...`` under
``--range-diff``), so lines of code and inline code spans hold none; nor does a word
far more common than the query's rarest (``the same value``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from .terms import terms
from .words import held_words, identifier_parts, word_groups

if TYPE_CHECKING:
    from collections.abc import Sequence
    from collections.abc import Set as AbstractSet

__all__ = ["asked_phrases", "phrase_pairs"]

#: An inline code span on one line (reST's double backticks are two spans around the same text).
_INLINE_CODE: Final = re.compile(r"`[^`\n]*`")


def phrase_pairs(of_line: Sequence[str], group: dict[str, int], found: AbstractSet[int]) -> set[tuple[int, int]]:
    """The pairs of the query's words (by ``group``, among ``found``) that follow each other in
    ``of_line`` (a line's terms) as they do in the query."""
    phrases: set[tuple[int, int]] = set()
    previous = -1
    for term in of_line:
        word = group.get(term, -1)
        if word < 0 or word not in found:
            previous = -1
            continue
        if word == previous + 1 and previous >= 0:
            phrases.add((previous, word))
        previous = word
    return phrases


def asked_phrases(
    raws: Sequence[str],
    per_line: Sequence[Sequence[str]],
    found: Sequence[AbstractSet[int]],
    group: dict[str, int],
    named: Sequence[str],
    common: AbstractSet[str],
    code: AbstractSet[int],
) -> dict[int, frozenset[tuple[int, int]]]:
    """For the lines of prose that hold a word looked for (``found``, by ``group``), the phrases of
    the query as asked (``named``) that take in a word not looked for; ``common`` terms take no part,
    nor lines of ``code`` (:func:`~.literal.literal_lines`).
    Pairs are numbered past ``group``'s, so they never equal one of its phrases."""
    by_name = word_groups(tuple(named), stem=False)
    if by_name.keys() <= group.keys():
        return {}
    parts = identifier_parts(by_name)
    asked = {word for term, word in by_name.items() if term in group}
    offset = max(group.values(), default=-1) + 1
    spans = _spans_open(raws)
    out: dict[int, frozenset[tuple[int, int]]] = {}
    for number, raw in enumerate(raws):
        if not found[number] or number in code:
            continue
        prose = terms(_prose_of(raw, spans[number])) if "`" in raw or spans[number] else per_line[number]
        prose = [term for term in prose if term not in common]
        pairs = phrase_pairs(prose, by_name, held_words(prose, by_name, parts))
        kept = frozenset((offset + a, offset + b) for a, b in pairs if not {a, b} <= asked)
        if kept:
            out[number] = kept
    return out


def _spans_open(raws: Sequence[str]) -> list[bool]:
    """For each line, whether an inline code span opened above it, in its paragraph, is still open."""
    out: list[bool] = []
    opened = False
    for raw in raws:
        opened = opened and bool(raw.strip())
        out.append(opened)
        if not raw.lstrip().startswith("```"):  # a fence opens no span
            opened ^= raw.count("`") % 2 == 1
    return out


def _prose_of(raw: str, opened: bool) -> str:
    """``raw`` without its inline code: its spans, and what a span open at its start or its end covers."""
    if opened:
        raw = raw[raw.index("`") + 1 :] if "`" in raw else ""
    raw = _INLINE_CODE.sub(" ", raw)
    return raw[: raw.index("`")] if "`" in raw else raw
