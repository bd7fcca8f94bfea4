"""The section headings inside a text, and the lines under another section than its trail's,
for :mod:`.passages`. Pure.

A chunk is found for its heading trail as much as for its text, but it may run past the end
of its section into the next: the tail of ``finally clause`` (under ``The try statement``),
then ``The with statement``. A window chosen by the words the trail lacks (``both``,
``block``, ``return``, ``value`` for "What happens if both the try block and the finally
block return a value?") settled on "... to wrap the execution of a block with ..." under
the with statement. :func:`away_lines` gives the lines under such a heading, for the window to
start above it. :func:`inner_headings` finds the titles a text holds: a line underlined
(reST, setext; or overlined too) by a run of one punctuation character at least as long,
after a blank line or the text's start; a markdown ``#`` heading; an AsciiDoc ``==``
title. Lines of code are no titles. :func:`entry_start` gives the line that starts the entry a
line lies in (a heading, or an API directive such as ``.. function::``, :func:`entry_starts`),
above which a window does not grow: the lines there end another entry; and of equally good
cores, one inside an entry beats one that spans entries.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Final

from .literal import literal_lines
from .markup import API_ENTRY
from .terms import terms
from .words import held_words, identifier_parts, word_groups

if TYPE_CHECKING:
    from collections.abc import Sequence
    from collections.abc import Set as AbstractSet

__all__ = ["away_lines", "entry_start", "entry_starts", "inner_headings"]

#: A line of one punctuation character repeated, three times or more (reST's adornment, setext's underline).
_ADORNMENT: Final = re.compile(r"([=\-~^\"'`#*+<>_:.!$%&,;?@|/\\])\1{2,}\s*")
#: A markdown heading, an AsciiDoc title.
_MARKED: Final = re.compile(r"(?:#{1,6}|={1,5})\s+(\S.*)")
#: Where to look for titles in a whole text: adornment lines, and lines marked as headings.
_ADORNED: Final = re.compile(r"^([=\-~^\"'`#*+<>_:.!$%&,;?@|/\\])\1{2,}[ \t]*$", re.MULTILINE)
_MARKED_LINE: Final = re.compile(r"^(?:#{1,6}|={1,5})[ \t]+\S", re.MULTILINE)
#: A line that starts an API entry, looked for in a whole text.
_API_LINE: Final = re.compile("^" + API_ENTRY.pattern, re.MULTILINE)


@functools.lru_cache(maxsize=64)
def inner_headings(text: str) -> tuple[tuple[int, str], ...]:
    """The (line number, title) of each heading in ``text`` (0-based; the title's line), in order.
    Cached: the window asks twice (:func:`away_lines`, :func:`entry_starts`)."""
    raws = text.split("\n")
    candidates = {_line_of(text, match.start()) for match in _ADORNED.finditer(text)}  # the line above an adornment
    candidates = {number - 1 for number in candidates if number > 0}
    candidates |= {_line_of(text, match.start()) for match in _MARKED_LINE.finditer(text)}
    code = literal_lines(text) if candidates else frozenset()
    out: list[tuple[int, str]] = []
    for number in sorted(candidates):
        raw = raws[number]
        if number in code or not raw.strip() or raw[0].isspace() or _ADORNMENT.fullmatch(raw):
            continue
        marked = _MARKED.fullmatch(raw.rstrip())
        if marked is not None:
            out.append((number, marked.group(1)))
            continue
        below = raws[number + 1] if number + 1 < len(raws) else ""
        above = raws[number - 1] if number > 0 else ""
        if _ADORNMENT.fullmatch(below) and len(below.rstrip()) >= len(raw.rstrip()):
            if not above.strip() or _ADORNMENT.fullmatch(above):
                out.append((number, raw.strip()))
    return tuple(out)


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position)


def away_lines(text: str, looked_for: Sequence[str], named: Sequence[str], trail: Sequence[str]) -> frozenset[int]:
    """The lines of ``text`` under a heading of its own that lacks a word of the query as asked
    (``named``) which ``trail`` (the text's heading trail) holds and the window does not look for
    (``looked_for``), up to a heading that holds them again or is one of ``trail``. None when the
    text starts with a heading: its headings are the trail's own or its subsections (PostgreSQL's
    ``## CLUSTER`` page and its ``## Description``)."""
    heads = inner_headings(text)
    if not heads or heads[0][0] == _line_of(text, len(text) - len(text.lstrip())):
        return frozenset()
    group = word_groups(tuple(named), stem=False)
    parts = identifier_parts(group)
    wanted = set(looked_for)
    asked = {word for term, word in group.items() if term in wanted}
    headed = held_words(terms(" ".join(trail)), group, parts) - asked
    if not headed:
        return frozenset()
    away: set[int] = set()
    ends = [*(line for line, _ in heads[1:]), text.count("\n") + 1]
    for (number, title), following in zip(heads, ends, strict=True):
        if title not in trail and headed - held_words(terms(title), group, parts):
            away.update(range(number, following))
    return frozenset(away)


@functools.lru_cache(maxsize=64)
def entry_starts(text: str) -> frozenset[int]:
    """The lines of ``text`` that start an entry: an API entry's directive (``.. function::
    suppress(*exceptions)``, indented or not) or a heading (:func:`inner_headings`). Cached."""
    directives = {_line_of(text, match.start()) for match in _API_LINE.finditer(text)}
    return frozenset(directives | {number for number, _ in inner_headings(text)})


def entry_start(starts: AbstractSet[int], line: int) -> int:
    """The line that starts the entry line ``line`` lies in: the nearest of ``starts``
    (:func:`entry_starts`) at or above it; 0 when none is."""
    return max((number for number in starts if number <= line), default=0)
