"""Split a document into structural blocks: headings, fenced code, list items, paragraphs.

Blocks tile the source: each starts where the previous one ends, the first at 0 and
the last at ``len(text)``. Blank lines belong to the block before them. Recognised:

* ATX headings (``#`` to ``######`` followed by a space; text with a letter or digit
  required, so ``# ----`` is not one) and setext headings (one paragraph line underlined by ``===`` or
  ``---``, three or more). A heading is a block of its own (its line, or its two).
* Fenced code blocks (`````` ``` `````` or ``~~~``, three or more, up to three
  spaces of indent), closed only by a fence of the same character at least as long
  with nothing after it; an unclosed fence runs to the end of the text.
* List items (``-``, ``*``, ``+``, ``1.``, ``1)`` followed by a space, up to three
  spaces of indent): each starts a block, its continuation lines stay with it.
* Paragraphs: runs of other non-blank lines, separated by blank lines.

Plain text and logs without markdown come out as paragraphs; a log without blank
lines is one paragraph, which the chunker later splits on line boundaries.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

__all__ = ["Block", "end_of_line", "iter_blocks"]

_MAX_TITLE_CHARS: Final = 200


class Block(NamedTuple):
    """One structural block: ``text[start:end]``; ``level`` > 0 for a heading.

    ``closes`` > 0 (not a heading): the block ends the headings of that level and
    deeper (text after a reST API entry's indented body).

    A named tuple, not a frozen dataclass: one is made per paragraph of every markdown,
    reST and AsciiDoc text, and a frozen dataclass sets each field through
    ``object.__setattr__`` (the Python docs' reST sources, 97,000 blocks: chunking
    0.58 -> 0.54 CPU-s in one process, alternating 4 times, same chunks).
    """

    start: int
    end: int
    level: int = 0
    title: str = ""
    closes: int = 0


# Lines that can change the block structure; every other line continues a block.
_STRUCTURAL_LINE: Final = (
    r"(?:(?P<blank>[ \t]*+(?:\r?\n|\r?\Z))"  # blank
    r"| {0,3}+(?:#{1,6}(?:[ \t]|\r?$)|`{3,}|~{3,}|[-*+][ \t]|\d{1,9}[.)][ \t]|={3,}[ \t]*\r?$|-{3,}[ \t]*\r?$))"
)
# Searched as a line feed and then such a line (the next line start is all ``re`` tries,
# where a MULTILINE ``^`` is tried at every position); the text's first line on its own.
_STRUCTURAL: Final = re.compile("\n" + _STRUCTURAL_LINE, re.MULTILINE)
_STRUCTURAL_FIRST: Final = re.compile(_STRUCTURAL_LINE, re.MULTILINE)
_ATX: Final = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?\n?\Z", re.DOTALL)
_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})(.*)", re.DOTALL)
_SETEXT: Final = re.compile(r" {0,3}(?:(=){3,}|-{3,})[ \t]*\r?\n?\Z")
_LIST_ITEM: Final = re.compile(r" {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]")


def iter_blocks(text: str) -> Iterator[Block]:
    """Yield the blocks of ``text`` in order; nothing for ``""``."""
    if not text:
        return
    size = len(text)
    start = 0  # start of the block being built
    heading: tuple[int, str] | None = None  # its (level, title) when it is a heading
    sealed = False  # the next content line starts a new block (blank line, heading, fence)
    struct_end = 0  # end of the last structural line handled
    scan = 0
    # One pass over the structural lines; a block is yielded inline where it ends (this
    # loop runs once per blank line, list item and heading of every ingested document).
    while (match := _next_structural(text, scan)) is not None:
        line_start = match.start() + (match.re is _STRUCTURAL)
        if line_start >= size:
            break
        if line_start > struct_end and sealed:  # ordinary lines came first: they start a block
            cut = yield from _close(text, start, struct_end, heading)
            start, heading, sealed = cut, None, False
        if match.group("blank") is not None:  # the common case, without slicing the line
            sealed = True
            struct_end = scan = match.end()
            continue
        line_end = end_of_line(text, line_start)
        line = text[line_start:line_end]
        found = _structure(text, line, line_start, line_end, follows_text=line_start > struct_end)
        if found is None:  # blank, or an ordinary line after all
            if not line.strip():
                sealed = True
            elif sealed:
                cut = yield from _close(text, start, line_start, heading)
                start, heading, sealed = cut, None, False
            struct_end = scan = line_end
            continue
        new_start, new_end, new_heading = found
        cut = yield from _close(text, start, new_start, heading)
        start, heading = cut, new_heading
        sealed = new_heading is not None or new_end > line_end  # headings and fences stand alone
        struct_end = scan = new_end
    if sealed and struct_end < size and text[struct_end:].strip():
        yield from _cut(start, struct_end, heading)
        start, heading = struct_end, None
    yield from _cut(start, size, heading)


def _next_structural(text: str, scan: int) -> re.Match[str] | None:
    """The first structural line at or after ``scan`` (0 or a line's start); a match of
    :data:`_STRUCTURAL` starts at the line feed before it."""
    if scan == 0 and (first := _STRUCTURAL_FIRST.match(text)) is not None:
        return first
    return _STRUCTURAL.search(text, scan - 1 if scan else 0)


def _close(text: str, start: int, at: int, heading: tuple[int, str] | None) -> Generator[Block, None, int]:
    """End the block being built at ``at``: yield it unless it is empty; return where the next one starts.

    The first block starts past the text's leading blank space.
    """
    cut = at if start else _after_leading_space(text, start, at)
    if cut > start:
        yield Block(start, cut) if heading is None else Block(start, cut, *heading)
    return cut


def _structure(
    text: str, line: str, line_start: int, line_end: int, *, follows_text: bool
) -> tuple[int, int, tuple[int, str] | None] | None:
    """Return (start, end, heading) of the block a structural line starts, if any."""
    if (atx := _ATX.match(line)) is not None:
        title = _title(atx.group(2) or "")
        if not title:
            return None
        return line_start, line_end, (len(atx.group(1)), title)
    if (fence := _FENCE.match(line)) is not None:
        if fence.group(1)[0] == "`" and "`" in fence.group(2):
            return None  # not a fence: an inline code span
        return line_start, _fence_end(text, line_end, fence.group(1)), None
    if (setext := _SETEXT.match(line)) is not None:
        if not follows_text:
            return None  # a thematic break
        title_start = text.rfind("\n", 0, line_start - 1) + 1
        title = _title(text[title_start:line_start])
        if not title:
            return None
        return title_start, line_end, (1 if setext.group(1) else 2, title)
    if _LIST_ITEM.match(line) is not None:
        return line_start, line_end, None
    return None


def _after_leading_space(text: str, start: int, end: int) -> int:
    """Return ``start`` instead of ``end`` for a first block of only blank lines.

    Leading blank lines then join the first real block instead of standing alone.
    """
    return start if start == 0 and text[:end].isspace() else end


def _cut(start: int, end: int, heading: tuple[int, str] | None) -> Iterator[Block]:
    if end > start:
        if heading is None:
            yield Block(start, end)
        else:
            yield Block(start, end, heading[0], heading[1])


def end_of_line(text: str, start: int) -> int:
    """Where the line holding ``text[start]`` ends: past its line feed, or at the text's end."""
    newline = text.find("\n", start)
    return len(text) if newline < 0 else newline + 1


def _fence_end(text: str, after_open: int, fence: str) -> int:
    """Return the end of the closing fence's line, or ``len(text)`` when unclosed."""
    closing = re.compile(f"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \\t]*\\r?$", re.MULTILINE)
    match = closing.search(text, after_open)
    return len(text) if match is None else end_of_line(text, match.start())


def _title(raw: str) -> str:
    """Return the heading text, whitespace collapsed; "" when it has no letter or digit."""
    title = " ".join(raw.split())
    if not any(char.isalnum() for char in title):
        return ""
    return title[:_MAX_TITLE_CHARS]
