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
from typing import TYPE_CHECKING, Final

from ctxtrio.text.kinds import Kind
from ctxtrio.text.markup import paragraph_spans

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

__all__ = ["DEFINITIONS", "Part", "code_parts"]

#: (start, end, trail, heading) of one part of a text; parts tile it.
Part = tuple[int, int, tuple[str, ...], bool]

_MAX_TITLE_CHARS: Final = 120
#: Lines walked back over for a definition's decorators and comments.
_MAX_LEAD_LINES: Final = 64

_JAVA_MODIFIERS: Final = (
    r"(?:(?:public|private|protected|internal|static|final|abstract|sealed|partial|readonly|unsafe|new|open|data"
    r"|inner|override|virtual|async|extern|synchronized|native|default|strictfp|suspend|inline|private\(set\))[ \t]+)*"
)

#: Definition lines, per language: ``indent`` and ``head`` (the title's words).
DEFINITIONS: Final[dict[Kind, re.Pattern[str]]] = {
    Kind.PYTHON: re.compile(
        r"^(?P<indent>[ \t]*)(?P<head>(?:async[ \t]+)?def[ \t]+\w+(?=[ \t]*\()|class[ \t]+\w+(?=[ \t]*[(:]))", re.MULTILINE
    ),
    Kind.JAVASCRIPT: re.compile(
        r"^(?P<indent>[ \t]*)(?P<head>"
        r"(?:export[ \t]+(?:default[ \t]+)?)?(?:declare[ \t]+)?(?:abstract[ \t]+)?(?:async[ \t]+)?"
        r"(?:function[ \t]*\*?[ \t]*[\w$]+|class[ \t]+[\w$]+|interface[ \t]+[\w$]+|enum[ \t]+[\w$]+"
        r"|namespace[ \t]+[\w$.]+|type[ \t]+[\w$]+(?=[ \t]*[=<])"
        r"|(?:const|let|var)[ \t]+[\w$]+(?=[ \t]*(?::[^=\n]*)?=[ \t]*(?:async[ \t]*)?"
        r"(?:function\b|\([^)\n]*\)[ \t]*(?::[^=\n]*)?=>|[\w$]+[ \t]*=>)))"
        r"|(?:[\w$]+\.)+[\w$]+(?=[ \t]*=[ \t]*(?:async[ \t]*)?(?:function\b|\([^)\n]*\)[ \t]*=>))"
        r"|(?<=[ \t])(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)[ \t]+)*\*?"
        r"(?!(?:if|for|while|switch|catch|return|function|else|do|try|with|new|typeof|await|yield|throw|super)\b)"
        r"[\w$]+(?=[ \t]*\([^\n;]*\)[ \t]*(?::[^\n{;]*)?\{[ \t]*\r?$))",
        re.MULTILINE,
    ),
    Kind.GO: re.compile(
        r"^(?P<indent>)(?P<head>func[ \t]+(?:\([^)\n]*\)[ \t]*)?\w+|type[ \t]+\w+[ \t]+(?:struct|interface)\b)", re.MULTILINE
    ),
    Kind.RUST: re.compile(
        r"^(?P<indent>[ \t]*)(?P<head>(?:pub(?:\([^)\n]*\))?[ \t]+)?"
        r"(?:(?:default|async|const|unsafe|extern(?:[ \t]+\"[^\"\n]*\")?)[ \t]+)*"
        r"(?:fn[ \t]+\w+|(?:struct|enum|trait|union)[ \t]+\w+|mod[ \t]+\w+(?=[ \t]*\{)|impl\b[^{\n;]*[^{\n;\s]"
        r"|macro_rules![ \t]*\w+))",
        re.MULTILINE,
    ),
    Kind.JAVA: re.compile(
        r"^(?P<indent>[ \t]*)(?P<head>" + _JAVA_MODIFIERS
        + r"(?:(?:class|interface|enum|record|struct|object|@interface|protocol|extension)[ \t]+\w+"
        r"|fun[ \t]+(?:<[^>\n]+>[ \t]*)?(?:[\w.]+\.)?\w+|func[ \t]+\w+"
        r"|(?:<[^>\n]+>[ \t]+)?(?!(?:return|new|else|throw|case|await|yield|if|for|while|switch|catch|using|lock"
        r"|foreach|goto|do|try|import|package)\b)[\w.<>\[\],?]+(?:[ \t]+[\w.<>\[\],?]+)?[ \t]+\w+"
        r"(?=[ \t]*\([^;\n=]*$)))",
        re.MULTILINE,
    ),
}  # fmt: skip

_LEAD: Final[dict[Kind, tuple[str, ...]]] = {Kind.PYTHON: ("@", "#")}
_LEAD_OTHER: Final = ("@", "#[", "//", "/*", "*", "[")
_COMMENT: Final[dict[Kind, tuple[str, ...]]] = {Kind.PYTHON: ("#",)}
_COMMENT_OTHER: Final = ("//", "/*", "*", "#[")
#: A paragraph whose first code line starts with one of these never ends a definition.
_KEEPS: Final = frozenset(")]}\"'`")
_INDENT: Final = re.compile(r"[ \t]*")


def code_parts(text: str, kind: Kind) -> Iterator[Part]:
    """The parts of source code ``text`` in language ``kind`` (one of ``CODE_KINDS``)."""
    pattern = DEFINITIONS[kind]
    lead = _LEAD.get(kind, _LEAD_OTHER)
    comment = _COMMENT.get(kind, _COMMENT_OTHER)
    stack: list[tuple[int, str]] = []
    trail: tuple[str, ...] = ()
    position = 0
    heading = False  # the text at ``position`` starts with a definition
    for match in pattern.finditer(text):
        indent = match.group("indent")
        start = max(position, _lead_start(text, match.start(), indent, lead))
        if start > position:
            trail = yield from _segment(text, position, start, heading, stack, trail, comment)
        width = len(indent)
        while stack and stack[-1][0] >= width:
            stack.pop()
        stack.append((width, " ".join(match.group("head").split())[:_MAX_TITLE_CHARS]))
        trail = tuple(title for _, title in stack)
        position, heading = start, True
    yield from _segment(text, position, len(text), heading, stack, trail, comment)


def _segment(
    text: str,
    start: int,
    end: int,
    heading: bool,
    stack: list[tuple[int, str]],
    trail: tuple[str, ...],
    comment: tuple[str, ...],
) -> Generator[Part, None, tuple[str, ...]]:
    """The paragraphs of ``text[start:end]``; the first is a heading when ``heading``.

    Returns the trail after them (a paragraph indented no deeper than the innermost
    definition closes it).
    """
    for piece_start, piece_end in paragraph_spans(text, start, end):
        if heading:
            yield piece_start, piece_end, trail, True
            heading = False
            continue
        if stack:
            width = _code_indent(text, piece_start, piece_end, comment)
            if width is not None and stack[-1][0] >= width:
                while stack and stack[-1][0] >= width:
                    stack.pop()
                trail = tuple(title for _, title in stack)
        yield piece_start, piece_end, trail, False
    return trail


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


def _lead_start(text: str, line_start: int, indent: str, lead: tuple[str, ...]) -> int:
    """Where a definition's part starts: above it, its decorators and comments at its indentation."""
    start = line_start
    for _ in range(_MAX_LEAD_LINES):
        if start == 0:
            break
        above = text.rfind("\n", 0, start - 1) + 1
        line = text[above:start]
        if not line.startswith(indent) or not line.lstrip(" \t").startswith(lead):
            break
        start = above
    return start
