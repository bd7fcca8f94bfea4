"""Source code split at definitions, each part with the definitions that enclose it as its trail.

A definition line (per language, :data:`DEFINITIONS`) starts a heading part, together
with the decorators, attributes and comments right above it at its indentation; the
rest is split into paragraphs at blank lines. Nesting follows indentation: a
definition encloses the definitions and paragraphs indented deeper than it, until a
paragraph whose first code line is indented no deeper (comment lines, closing
brackets and string continuations do not end a definition). Comments are never
headings: ``# Use speedup if available`` is code commentary, not a section.

Titles are the definition's words up to its name (``class JSONDecodeError``,
``def py_scanstring``, ``func (r *Reader) Read``, ``impl Display for Point``).

One compiled regex per language finds the definition lines; Python code runs once per
definition and per paragraph, never per character.
"""

from __future__ import annotations

import re
from itertools import chain
from typing import TYPE_CHECKING, Final

from ctxtrio.text.kinds import Kind
from ctxtrio.text.markup import PARAGRAPH_GAP
from ctxtrio.text.methods import split_return_type

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["DEFINITIONS", "Part", "code_parts", "comment_start"]

#: (start, end, trail, heading) of one part of a text; parts tile it.
Part = tuple[int, int, tuple[str, ...], bool]

_MAX_TITLE_CHARS: Final = 120

_JAVA_MODIFIERS: Final = (
    r"(?:(?:public|private|protected|internal|static|final|abstract|sealed|partial|readonly|unsafe|new|open|data"
    r"|inner|override|virtual|async|extern|synchronized|native|default|strictfp|suspend|inline|private\(set\))[ \t]+)*"
)

# Definition lines, per language: ``indent`` and ``head`` (the title's words). Each is
# found after a line feed (and at the text's start), never tried at other positions; the
# indentation is taken whole (no definition starts with a space or tab).
_DEFINITION_LINES: Final[dict[Kind, str]] = {
    Kind.PYTHON: (
        r"(?P<indent>[ \t]*+)(?P<head>(?:async[ \t]+)?def[ \t]+\w+(?=[ \t]*\()|class[ \t]+\w+(?=[ \t]*[(:]))"
    ),
    Kind.JAVASCRIPT: (
        r"(?P<indent>[ \t]*+)(?P<head>"
        r"(?:export[ \t]+(?:default[ \t]+)?)?(?:declare[ \t]+)?(?:abstract[ \t]+)?(?:async[ \t]+)?"
        r"(?:function[ \t]*\*?[ \t]*[\w$]+|class[ \t]+[\w$]+|interface[ \t]+[\w$]+|enum[ \t]+[\w$]+"
        r"|namespace[ \t]+[\w$.]+|module[ \t]+(?:[\w$.]+|\"[^\"\n]*\"|'[^'\n]*')(?=[ \t]*\{)"
        r"|type[ \t]+[\w$]+(?=[ \t]*[=<])"
        r"|(?:const|let|var)[ \t]+[\w$]+(?=[ \t]*(?::[^=\n]*)?=[ \t]*(?:async[ \t]*)?"
        r"(?:function\b|\([^)\n]*\)[ \t]*(?::[^=\n]*)?=>|[\w$]+[ \t]*=>)))"
        r"|(?:[\w$]+\.)+[\w$]+(?=[ \t]*=[ \t]*(?:async[ \t]*)?(?:function\b|\([^)\n]*\)[ \t]*=>))"
        r"|(?<=[ \t])(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)[ \t]+)*\*?"
        r"(?!(?:if|for|while|switch|catch|return|function|else|do|try|with|new|typeof|await|yield|throw|super)\b)"
        r"[\w$]+(?=[ \t]*\([^\n;]*\)[ \t]*(?::[^\n{;]*)?\{[ \t]*\r?$))"
    ),
    # Every type declaration, not only structs and interfaces: ``type HandlerFunc func(...)``,
    # ``type Header map[string][]string``, ``type ConnState int``, generic ``type Pointer[T any] struct``.
    Kind.GO: (
        r"(?P<indent>)(?P<head>func[ \t]+(?:\([^)\n]*\)[ \t]*)?\w+"
        r"|type[ \t]+\w+(?:\[[^\]\n]*\])?(?=[ \t]+[^\s(])(?:[ \t]+(?:struct|interface)\b)?)"
    ),
    Kind.RUST: (
        r"(?P<indent>[ \t]*+)(?P<head>(?:pub(?:\([^)\n]*\))?[ \t]+)?"
        r"(?:(?:default|async|const|unsafe|extern(?:[ \t]+\"[^\"\n]*\")?)[ \t]+)*"
        r"(?:fn[ \t]+\w+|(?:struct|enum|trait|union)[ \t]+\w+|mod[ \t]+\w+(?=[ \t]*\{)|impl\b[^{\n;]*[^{\n;\s]"
        r"|macro_rules![ \t]*\w+))"
    ),
    Kind.JAVA: (
        r"(?P<indent>[ \t]*+)(?P<head>" + _JAVA_MODIFIERS
        + r"(?:(?:class|interface|enum|record|struct|object|@interface|protocol|extension)[ \t]+\w+"
        r"|fun[ \t]+(?:<[^>\n]+>[ \t]*)?(?:[\w.]+\.)?\w+|func[ \t]+\w+"
        r"|(?:<[^>\n]+>[ \t]+)?(?!(?:return|new|else|throw|case|await|yield|if|for|while|switch|catch|using|lock"
        r"|foreach|goto|do|try|import|package)\b)[\w.<>\[\],?]+(?:[ \t]+[\w.<>\[\],?]+)?[ \t]+\w+"
        r"(?=[ \t]*\([^;\n=]*$))"
        # A method whose name starts the line after its return type or its type parameters (split_return_type).
        r"|" + split_return_type("(?P=indent)") + r"\w+(?=[ \t]*\())"
    ),
}  # fmt: skip

#: A line feed, then a definition line (:data:`_DEFINITION_LINES`), per language
#: (``$`` is a line's end, as before).
DEFINITIONS: Final = {kind: re.compile("\n" + line, re.MULTILINE) for kind, line in _DEFINITION_LINES.items()}
_FIRST_LINE: Final = {kind: re.compile(line, re.MULTILINE) for kind, line in _DEFINITION_LINES.items()}

_LEAD: Final[dict[Kind, tuple[str, ...]]] = {Kind.PYTHON: ("@", "#")}
_LEAD_OTHER: Final = ("@", "#[", "//", "/*", "*", "[")
_COMMENT: Final[dict[Kind, tuple[str, ...]]] = {Kind.PYTHON: ("#",)}
_COMMENT_OTHER: Final = ("//", "/*", "*", "#[")
#: A paragraph whose first code line starts with one of these never ends a definition.
_KEEPS: Final = frozenset(")]}\"'`")
_INDENT: Final = re.compile(r"[ \t]*")
_match_end: Final = re.Match.end


def code_parts(text: str, kind: Kind) -> Iterator[Part]:
    """The parts of source code ``text`` in language ``kind`` (one of ``CODE_KINDS``)."""
    lead = _LEAD.get(kind, _LEAD_OTHER)
    comment = _COMMENT.get(kind, _COMMENT_OTHER)
    # The enclosing definitions, innermost last: their indentations and their titles.
    widths: list[int] = []
    titles: list[str] = []
    trail: tuple[str, ...] = ()
    position = 0
    heading = False  # the text at ``position`` starts with a definition
    cuts = _paragraph_cuts(text)
    cut_count = len(cuts)
    next_cut = 0  # the first of ``cuts`` after ``position``
    first = _FIRST_LINE[kind].match(text)
    found = DEFINITIONS[kind].finditer(text)  # each match starts at the line feed before its line
    for match in chain((first,) if first is not None else (), found, (None,)):
        if match is None:  # after the last definition: the rest of the text
            start = len(text)
        else:
            line_start = match.start() + (match is not first)
            start = _lead_start(text, line_start, match.group("indent"), lead, position)
        # The paragraphs up to the next definition's part: the first is the heading part
        # of the definition before them, each other one closes the definitions indented
        # no less than its first code line. They end at the cuts before ``start``.
        while next_cut < cut_count and cuts[next_cut] <= position:
            next_cut += 1
        piece_start = position
        while piece_start < start:
            if next_cut < cut_count and cuts[next_cut] < start:
                piece_end = cuts[next_cut]
                next_cut += 1
            else:
                piece_end = start
            if heading:
                heading = False
                yield piece_start, piece_end, trail, True
            else:
                if widths:
                    width = _code_indent(text, piece_start, piece_end, comment)
                    if width is not None and widths[-1] >= width:
                        while widths and widths[-1] >= width:
                            widths.pop()
                            titles.pop()
                        trail = tuple(titles)
                yield piece_start, piece_end, trail, False
            piece_start = piece_end
        if match is None:
            return
        width = len(match.group("indent"))
        while widths and widths[-1] >= width:
            widths.pop()
            titles.pop()
        widths.append(width)
        titles.append(" ".join(match.group("head").split())[:_MAX_TITLE_CHARS])
        trail = tuple(titles)
        position, heading = start, True


def _paragraph_cuts(text: str) -> list[int]:
    """Where the paragraphs of ``text`` start after its first, in one pass over the whole
    text: what :func:`~ctxtrio.text.markup.paragraph_spans` cuts at inside any span that
    starts and ends at a non-blank line (or the text's ends), as every span of
    :func:`code_parts` does. No blank-line gap crosses such an edge, so the gaps inside
    a span are the whole text's; a gap ending at the span's end is no cut there, and
    leading blank lines join the first paragraph."""
    leading = len(text) - len(text.lstrip())  # text[:cut].isspace() for a cut up to here
    return [cut for cut in map(_match_end, PARAGRAPH_GAP.finditer(text)) if cut > leading]


def _code_indent(text: str, start: int, end: int, comment: tuple[str, ...]) -> int | None:
    """Indentation of the first code line in ``text[start:end]`` (of its first line when all
    are comments); None if it cannot end a definition."""
    position = start
    first: int | None = None
    while position < end:
        indent = _INDENT.match(text, position)
        code = indent.end() if indent is not None else position  # it always matches, maybe empty
        if code >= end:
            break
        if text.startswith(comment, code) or text[code] in "\r\n":
            if first is None:
                first = code - position
            position = text.find("\n", code, end) + 1
            if position <= 0:
                break
            continue
        return None if text[code] in _KEEPS else code - position
    return first


def comment_start(text: str, line_start: int) -> int:
    """Where the comments, decorators and attributes right above the line at ``line_start`` start, at its
    indentation, in any language's markers (``line_start`` itself when there are none): a definition's doc."""
    indent = _INDENT.match(text, line_start)
    width = indent.group(0) if indent is not None else ""
    return _lead_start(text, line_start, width, (*_LEAD_OTHER, "#"), 0)


def _lead_start(text: str, line_start: int, indent: str, lead: tuple[str, ...], floor: int) -> int:
    """Where a definition's part starts: above it, its decorators and comments at its indentation,
    however many (a Javadoc or a Rust doc comment with its examples runs past 64 lines: tokio's
    ``interval``, 84 definitions of OpenJDK's java.util), but not before ``floor``, where the part
    before it starts. Each line is walked over once a text: the walk stops at the line above the
    comments, which the next definition's walk does not pass, or at ``floor``."""
    start = line_start
    while start > floor:
        above = text.rfind("\n", 0, start - 1) + 1
        line = text[above:start]
        if not line.startswith(indent) or not line.lstrip(" \t").startswith(lead):
            break
        start = above
    return max(start, floor)
