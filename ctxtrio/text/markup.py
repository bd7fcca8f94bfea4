"""Blocks of reStructuredText and of plain paragraphs (see :mod:`.blocks` for markdown, :mod:`.asciidoc`
for AsciiDoc).

Like :func:`ctxtrio.text.blocks.iter_blocks`, every function here yields
:class:`~ctxtrio.text.blocks.Block` s that tile the text (blank lines belong to the
block before them, leading ones to the first block); a heading is a block of its own.

* **reST** (docutils' rules): a title is one unindented line underlined by a line of
  one repeated punctuation character (three or more, and at least as long as the title
  unless four or more), optionally also overlined by the same line. Levels follow the
  order in which each style (character, overlined or not) first appears. A title must
  follow a blank line, the start, or another title; a lone adornment line is a
  transition, not a title.
* **reST API entries**: a Sphinx/docutils description directive (``.. function::
  json.dumps(obj)``, ``.. class::``, ``.. method::``, ``.. option::``, ...) is a heading
  titled by its kind and name (``function json.dumps``), below every section and
  nested by its indentation (a ``method`` indented under its ``class``). In the C and C++
  domains the name is the one declared, not its type (``.. c:function:: int PyList_Check(PyObject *p)``
  is ``function PyList_Check``).
* **Paragraphs**: runs of non-blank lines separated by blank lines (plain text, logs,
  and the text between titles).

Compiled regexes find the few structural lines; Python code runs once per title and
per paragraph, never per character.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from ctxtrio.text.blocks import Block, end_of_line
from ctxtrio.text.definitions import declared_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = [
    "API_ENTRY",
    "API_KINDS",
    "PARAGRAPH_GAP",
    "Heading",
    "paragraph_spans",
    "plain_blocks",
    "rst_blocks",
    "tile",
]

_MAX_TITLE_CHARS: Final = 200
#: A blank run between paragraphs: its end is where the next paragraph starts.
PARAGRAPH_GAP: Final = re.compile(r"\n(?:[ \t\r\f\v]*+\n)+(?=[ \t\r\f\v]*+[^ \t\r\f\v\n])")
#: Blank lines (and trailing blanks at the very end) that follow a heading.
_BLANKS: Final = re.compile(r"(?:[ \t\r\f\v]*\n)*(?:[ \t\r\f\v]+\Z)?")
#: The API description directives (Sphinx and docutils domains).
_API_KINDS: Final = (
    r"function|class|method|classmethod|staticmethod|attribute|property|exception|data|decorator|decoratormethod"
    r"|option|cmdoption|envvar|describe|object|macro|type|member|struct|enum|command|variable|var|opcode"
)
#: The same kinds, as names (``text/leads.py`` embeds one lead per such entry).
API_KINDS: Final = frozenset(_API_KINDS.split("|"))
#: An adornment line, or an API description directive.
_RST_LINE: Final = (
    r"(?:(?P<adorn>(?P<char>[!-/:-@\[-`{-~])(?P=char){2,})[ \t]*\r?$"
    rf"|(?P<indent>[ \t]*+)\.\.[ \t]+(?P<domain>[\w-]+:)?(?P<api>{_API_KINDS})::[ \t]+(?P<name>[^\s(]+)"
    r"(?P<signature>[^\n]*))"
)
#: A line that starts an API entry (``.. function:: name(args)``, indented or not).
API_ENTRY: Final = re.compile(rf"[ \t]*\.\.[ \t]+(?:[\w-]+:)?(?:{_API_KINDS})::[ \t]+\S")
_C_DOMAINS: Final = frozenset({"c:", "cpp:"})
#: Levels of API directives: deeper than any section, nested by indentation.
_API_LEVEL: Final = 100
_ADORNMENT_LINE: Final = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*\r?\n?\Z")
#: The line pattern as searched: the first line at the text's start, the others
#: after a line feed (the only positions ``re`` tries; a MULTILINE ``^`` is tried at all).
_RST: Final = (re.compile(_RST_LINE, re.MULTILINE), re.compile("\n" + _RST_LINE, re.MULTILINE))


def _lines(patterns: tuple[re.Pattern[str], re.Pattern[str]], text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """(line start, match) of every line of ``text`` that matches the line pattern ``patterns`` is built from."""
    first, rest = patterns
    if (found := first.match(text)) is not None:
        yield 0, found
    for found in rest.finditer(text):
        yield found.start() + 1, found


#: (start, end, level, title) of a heading's lines.
Heading = tuple[int, int, int, str]


def plain_blocks(text: str) -> Iterator[Block]:
    """Paragraph blocks only: no line is a heading (plain text, logs)."""
    return tile(text, ())


def rst_blocks(text: str) -> Iterator[Block]:
    """The blocks of a reStructuredText document; an unindented paragraph closes API entries."""
    for block in tile(text, _rst_headings(text)):
        if not block.level and text[block.start] not in " \t\r\n":
            yield Block(block.start, block.end, closes=_API_LEVEL)
        else:
            yield block


def tile(text: str, headings: Iterable[Heading]) -> Iterator[Block]:
    """Blocks of ``text``: each heading alone (with the blank lines after it), paragraphs between."""
    position = 0
    for start, end, level, title in headings:
        if start < position:
            continue
        if start > position:
            if position == 0 and text[:start].isspace():
                start = 0  # leading blank lines join the first block
            else:
                for piece_start, piece_end in paragraph_spans(text, position, start):
                    yield Block(piece_start, piece_end)
        blanks = _BLANKS.match(text, end)
        end = blanks.end() if blanks is not None else end  # it always matches, maybe empty
        yield Block(start, end, level, title)
        position = end
    for piece_start, piece_end in paragraph_spans(text, position, len(text)):
        yield Block(piece_start, piece_end)


def paragraph_spans(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(start, end) of the paragraphs of ``text[start:end]``, tiling it; none when it is empty."""
    position = start
    for gap in PARAGRAPH_GAP.finditer(text, start, end):
        cut = gap.end()
        if cut >= end:
            break
        if position == 0 and text[:cut].isspace():
            continue  # leading blank lines join the first paragraph
        yield position, cut
        position = cut
    if position < end:
        yield position, end


def _title(raw: str) -> str:
    return " ".join(raw.split())[:_MAX_TITLE_CHARS]


def _rst_headings(text: str) -> Iterator[Heading]:
    styles: dict[tuple[str, bool], int] = {}
    skip_until = 0
    for line_start, match in _lines(_RST, text):
        if line_start < skip_until:
            continue
        line_end = end_of_line(text, line_start)
        line = match.group("adorn")
        if line is None:  # an API entry: ``.. function:: name(args)`` titled "function name"
            level = _API_LEVEL + len(match.group("indent"))
            yield line_start, line_end, level, f"{match.group('api')} {_api_name(match)}"[:_MAX_TITLE_CHARS]
            continue
        heading = _underlined(text, line, line_start, line_end)
        overlined = heading is None
        if heading is None:
            heading = _overlined(text, line, line_start, line_end)
        if heading is None:
            continue
        start, end, title = heading
        level = styles.setdefault((line[0], overlined), len(styles) + 1)
        skip_until = end
        yield start, end, level, title


def _api_name(match: re.Match[str]) -> str:
    """The name an API directive describes: its first word (``json.dumps`` of ``json.dumps(obj)``),
    but in the C and C++ domains the declared name, not the type written before it (``PyList_New``
    of ``PyObject* PyList_New(Py_ssize_t len)``, not ``PyObject*``; ``buf`` of ``void *buf``)."""
    if match.group("domain") not in _C_DOMAINS:
        return match.group("name")
    declared = declared_name(match.group("name") + match.group("signature"))
    # a member is titled by its own name (``tp_name``), as trails always were: its struct's entry encloses it
    return declared.rsplit(".", 1)[-1] if declared else match.group("name")


def _overlined(text: str, line: str, line_start: int, line_end: int) -> tuple[int, int, str] | None:
    """The title this adornment line overlines (same line below the title), if any."""
    title_end = end_of_line(text, line_end)
    raw = text[line_end:title_end]
    if not raw.strip() or _ADORNMENT_LINE.match(raw) is not None:
        return None
    under_end = end_of_line(text, title_end)
    if text[title_end:under_end].rstrip() != line or not _follows_break(text, line_start):
        return None
    title = _title(raw)
    return (line_start, under_end, title) if title and len(title) <= len(line) else None


def _underlined(text: str, line: str, line_start: int, line_end: int) -> tuple[int, int, str] | None:
    """The title this adornment line underlines, if any."""
    if line_start == 0:
        return None
    title_start = text.rfind("\n", 0, line_start - 1) + 1
    raw = text[title_start:line_start]
    if not raw.strip() or raw[0] in " \t" or _ADORNMENT_LINE.match(raw) is not None:
        return None
    title = _title(raw)
    if len(line) < 4 and len(line) < len(title):
        return None
    if not _follows_break(text, title_start):
        return None
    return title_start, line_end, title


def _follows_break(text: str, line_start: int) -> bool:
    """Whether the line at ``line_start`` follows the start, a blank line or an adornment line."""
    if line_start == 0:
        return True
    before_start = text.rfind("\n", 0, line_start - 1) + 1
    before = text[before_start:line_start]
    return not before.strip() or _ADORNMENT_LINE.match(before) is not None
