"""Blocks of an AsciiDoc document: titles, delimited blocks and labeled-list entries.

The rules are AsciiDoc's (the user guide of asciidoc-py, which git's manual is written
for: https://asciidoc-py.github.io/chunked/ch11.html "Titles", ch16 "Delimited Blocks",
ch17 "Lists"):

* **One-line titles**: ``= Title`` (level 1) to ``====== Title`` (level 6); the optional
  closing ``=`` run (``== Title ==``) is not part of the title.
* **Two-line titles**: a title line hard against the left margin, underlined by a run of
  ``=``, ``-``, ``~``, ``^`` or ``+`` (levels 1 to 5) "spanning the width of the
  preceding title (give or take up to two characters)". The title line follows the
  start, a blank line, another title, an anchor or attribute line (``[[id]]``,
  ``[float]``), a comment or a preprocessor line (``ifdef::...[]``); a block title
  (``.Example``) is not one. So ``NAME`` over ``----`` is a title, while a listing
  block's last line over its closing ``----`` is not. (git's manual: its ``.txt`` sources are sniffed as
  AsciiDoc by :mod:`.kinds`; read as reST, such lines became titles.)
* **Delimited blocks**: listing ``----``, literal ``....``, passthrough ``++++``, comment
  ``////``, example ``====``, sidebar ``****`` and quote ``____`` (four or more; closed
  by a run of the same character, four or more) and fences: no line inside is a title
  or an entry.
* **Anchors**: ``[[id]]`` and ``[[id,label]]`` in a title are not part of it
  (``OPTIONS[[OPTIONS]]`` is ``OPTIONS``).
* **Labeled-list entries**: a label hard against the left margin ending in ``::``,
  ``:::``, ``::::`` or ``;;`` (``--force-with-lease::``, ``core.bare::``); labels on
  consecutive lines are one entry, titled by them joined with ", ". Like reST's API
  entries (:mod:`.markup`), an entry is a heading below every section, so the option
  a chunk explains is in its trail; the entry ends at the next entry or section, or at
  an unindented paragraph that no ``+`` attaches to it (outside an open block ``--``).

Compiled regexes find the few structural lines; Python code runs once per such line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from ctxtrio.text.blocks import Block, end_of_line
from ctxtrio.text.markup import Heading, tile

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["LABEL", "PREPROCESSOR", "asciidoc_blocks"]

#: A labeled-list entry's label hard against the left margin and its marker (``--force-with-lease::``,
#: ``core.bare::``, ``item;;``; the label is what comes before the first marker): also what :mod:`.extractive`
#: reads as a heading of an extract. A regular expression's source, for patterns to build on.
LABEL: Final = r"(?P<label>[^\s][^\n]*?)(?P<colons>:{2,4}|;;)"
#: A preprocessor line's directive (``ifdef::git-shortlog[]``, ``include::config.txt[]``): a source to build on.
PREPROCESSOR: Final = r"(?:ifdef|ifndef|ifeval|endif|include)::"

_MAX_TITLE_CHARS: Final = 200
#: Levels of labeled-list entries: deeper than any section (``::`` 100, ``:::`` 101, ...).
_ENTRY_LEVEL: Final = 100
_ENTRY_LEVELS: Final = {"::": 0, ":::": 1, "::::": 2, ";;": 3}
_UNDERLINES: Final = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_DELIMITERS: Final = frozenset("-.+/=*_")
_LINE: Final = (
    r"(?:(?P<marks>={1,6})[ \t]+(?P<title>[^\s][^\n]*?)(?:[ \t]+=+)?[ \t]*\r?$"
    r"|(?P<run>(?P<char>[-.+/=*_~^])(?P=char)+|`{3,}[^\n`]*)[ \t]*\r?$"
    rf"|{LABEL}(?:[ \t]+[^\n]*)?\r?$)"
)
#: The line pattern as searched: the first line at the text's start, the others after a
#: line feed (the only positions ``re`` tries; a MULTILINE ``^`` is tried at all).
_FIRST: Final = re.compile(_LINE, re.MULTILINE)
_REST: Final = re.compile("\n" + _LINE, re.MULTILINE)
_ANCHOR: Final = re.compile(r"\[\[[^\]\n]*\]\]")
#: Lines a two-line title may follow besides a blank one: anchors, attribute lists, comments,
#: preprocessor lines (``ifndef::git-shortlog[]``, gone before titles are read) and the
#: underline of a title just above.
_BREAK_LINE: Final = re.compile(rf"[ \t]*(?:\[[^\n]*\]|//[^\n]*|{PREPROCESSOR}[^\n]*|([-=~^+])\1+)?[ \t]*\r?\n?\Z")


def asciidoc_blocks(text: str) -> Iterator[Block]:
    """The blocks of an AsciiDoc document; an unattached unindented paragraph closes entries."""
    headings, open_blocks = _scan(text)
    inside = iter(open_blocks)
    span = next(inside, None)
    for block in tile(text, headings):
        while span is not None and span[1] <= block.start:
            span = next(inside, None)
        if (
            not block.level
            and text[block.start] not in " \t\r\n"
            and not (span is not None and span[0] < block.start)
            and not _attached(text, block.start)
        ):
            yield Block(block.start, block.end, closes=_ENTRY_LEVEL)
        else:
            yield block


def _scan(text: str) -> tuple[list[Heading], list[tuple[int, int]]]:
    """The headings of ``text`` in order, and the (start, end) of its open blocks (``--``)."""
    headings: list[Heading] = []
    open_blocks: list[tuple[int, int]] = []
    inside = ""  # the delimiter character of the block being skipped ("`" for a fence)
    open_at = -1
    for line_start, match in _lines(text):
        run = match.group("run")
        if inside:
            if run is not None and run[0] == inside and (len(run) >= 4 or inside == "`"):
                inside = ""
            continue
        line_end = end_of_line(text, line_start)
        if run == "--":
            if open_at < 0:
                open_at = line_start
            else:
                open_blocks.append((open_at, line_end))
                open_at = -1
        elif run is not None:
            inside = _run(text, run, line_start, line_end, headings)
        elif match.group("marks") is not None:
            if title := _title(match.group("title")):
                headings.append((line_start, line_end, len(match.group("marks")), title))
        elif label := _title(match.group("label")):
            _entry(headings, label, _ENTRY_LEVEL + _ENTRY_LEVELS[match.group("colons")], line_start, line_end)
    if open_at >= 0:
        open_blocks.append((open_at, len(text)))
    return headings, open_blocks


def _run(text: str, run: str, line_start: int, line_end: int, headings: list[Heading]) -> str:
    """Handle a line that is one character repeated: add the title it underlines, if any; else
    return the delimiter character of the block it opens ("" for none)."""
    if (underlined := _underlined(text, run, line_start)) is not None:
        title_start, title = underlined
        headings.append((title_start, line_end, _UNDERLINES[run[0]], title))
        return ""
    if run[0] == "`" or (run[0] in _DELIMITERS and len(run) >= 4):
        return run[0]
    return ""


def _entry(headings: list[Heading], label: str, level: int, line_start: int, line_end: int) -> None:
    """Add a labeled-list entry; a label on the line after another one's joins its entry."""
    if headings and headings[-1][1] == line_start and headings[-1][2] == level:
        first_start, _, _, first = headings.pop()
        label = f"{first}, {label}"[:_MAX_TITLE_CHARS]
        line_start = first_start
    headings.append((line_start, line_end, level, label))


def _attached(text: str, start: int) -> bool:
    """Whether the last non-blank line before ``start`` is a lone ``+`` (a list continuation)."""
    end = start
    while end > 0 and text[end - 1] in " \t\r\n":
        end -= 1
    return end > 0 and text[end - 1] == "+" and (end == 1 or text[end - 2] == "\n")


def _lines(text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """(line start, match) of every line of ``text`` that may be structure."""
    if (found := _FIRST.match(text)) is not None:
        yield 0, found
    for found in _REST.finditer(text):
        yield found.start() + 1, found


def _underlined(text: str, run: str, line_start: int) -> tuple[int, str] | None:
    """(start, title) of the title line ``run`` (at ``line_start``) underlines, if it is a title's underline."""
    if run[0] not in _UNDERLINES or line_start == 0:
        return None
    title_start = text.rfind("\n", 0, line_start - 1) + 1
    raw = text[title_start:line_start].rstrip()
    if not raw or raw[0] in " \t" or abs(len(raw) - len(run)) > 2:
        return None
    if raw[0] == "." and raw[1:2] not in (" ", "."):  # a block title
        return None
    if _FIRST.match(raw) is not None:
        return None  # a title, a delimiter, another underline or a label
    if title_start > 0:
        before = text[text.rfind("\n", 0, title_start - 1) + 1 : title_start]
        if _BREAK_LINE.match(before) is None:
            return None
    title = _title(raw)
    return (title_start, title) if title else None


def _title(raw: str) -> str:
    """The title shown in trails: anchors out, whitespace runs as one space; "" without a letter or digit."""
    title = " ".join(_ANCHOR.sub(" ", raw).split())[:_MAX_TITLE_CHARS]
    return title if any(char.isalnum() for char in title) else ""
