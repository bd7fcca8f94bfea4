"""Which lines of a text are code or a program's output, not prose, for :mod:`.passages`. Pure.

A manual explains a name in prose and then shows it in use: an example repeats the
name on every line, a console transcript prints the words of the question back
(``File "<stdin>", line 1``). A window chosen by the query's words alone settles there
and leaves out the sentence that says what the name does. :func:`literal_lines` finds
the lines of

* fenced blocks (markdown's ``````` and ``~~~``; a text cut from a longer one that
  starts inside a fence is read as starting outside it; a ``~~~`` run under a title as long
  as it is the title's underline, reST's or AsciiDoc's, not a fence),
* reST literal blocks: the lines indented deeper than a paragraph that ends with ``::``
  (or than a ``.. code-block::``-like directive), after a blank line, up to the next line
  indented no deeper than it,
* doctest transcripts: a line starting with ``>>>`` and the lines after it up to a blank
  line (continuation lines, output, tracebacks).

A ``.. function::``-like directive's body is not literal: only the directives whose body is
code (:data:`_CODE_DIRECTIVES`).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["indent_of", "literal_lines"]

#: A markdown fence: three backticks or tildes or more, up to three spaces of indent.
_FENCE: Final = re.compile(r" {0,3}(`{3,}|~{3,})")
#: A reST directive whose body is code.
_CODE_DIRECTIVES: Final = re.compile(
    r"\s*\.\.\s+(?:code-block|code|sourcecode|literalinclude|doctest|testcode|testoutput|highlight-block)::"
)
#: A doctest prompt.
_PROMPT: Final = re.compile(r"\s*>>>(?:\s|$)")


def indent_of(line: str) -> int:
    """How many whitespace characters ``line`` starts with."""
    return len(line) - len(line.lstrip())


@functools.lru_cache(maxsize=64)
def literal_lines(text: str) -> frozenset[int]:
    """The numbers (0-based) of the lines of ``text`` that are code or output (see the module).
    Cached: the window and the headings inside a text both ask (each kind looked for only when
    its marks are in the text)."""
    raws = text.split("\n")
    fenced = _fenced(raws) if "```" in text or "~~~" in text else set()
    indented = _indented(raws) if "::" in text else set()
    return frozenset(fenced | indented | (_transcripts(raws) if ">>>" in text else set()))


def _fenced(raws: Sequence[str]) -> set[int]:
    """The lines of fenced blocks, fences included."""
    out: set[int] = set()
    fence = ""
    for number, raw in enumerate(raws):
        if fence:
            out.add(number)
            stripped = raw.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
        elif (
            (match := _FENCE.match(raw)) is not None
            and not (match.group(1)[0] == "`" and "`" in raw[match.end() :])
            and not (number and _underlines(raws[number - 1], raw))
        ):
            fence = match.group(1)
            out.add(number)
    return out


def _underlines(above: str, raw: str) -> bool:
    """Whether ``raw``, a run of ``~`` alone on its line, underlines the title ``above`` (reST's and AsciiDoc's
    ``Skip algorithm`` over ``~~~~~~~~~~~~~~``): ``above`` is text hard against the margin, and ``raw`` is at least
    as long as it, give or take two characters (AsciiDoc's rule; reST wants it as long or longer). Markdown fences
    a block with it, but seldom right under a line of prose as long as the fence."""
    run = raw.strip()
    title = above.rstrip()
    return (
        run[:1] == "~"
        and not run.strip("~")
        and title[:1] not in ("", " ", "\t", "~", "`")
        and len(run) >= len(title) - 2
    )


def _transcripts(raws: Sequence[str]) -> set[int]:
    """The lines from a doctest prompt to the next blank line."""
    out: set[int] = set()
    inside = False
    for number, raw in enumerate(raws):
        inside = bool(raw.strip()) and (inside or _PROMPT.match(raw) is not None)
        if inside:
            out.add(number)
    return out


def _indented(raws: Sequence[str]) -> set[int]:
    """The lines of reST literal blocks: indented deeper than the paragraph ending in ``::`` (or the
    code directive) above them, after a blank line."""
    out: set[int] = set()
    opener: int | None = None  # the indent of the paragraph or directive a literal block follows
    inside = False  # past the blank line after the opener
    for number, raw in enumerate(raws):
        stripped = raw.strip()
        if not stripped:
            inside = opener is not None
            continue
        if opener is not None and indent_of(raw) > opener and (inside or stripped.startswith(":")):
            if inside:  # (else a directive's option, ``:linenos:``)
                out.add(number)
            continue
        opener, inside = None, False
        if _CODE_DIRECTIVES.match(raw):
            opener = indent_of(raw)
        elif stripped.endswith("::") and not stripped.startswith(".."):  # ``.. note::``'s body is prose
            opener = _paragraphindent_of(raws, number)
    return out


def _paragraphindent_of(raws: Sequence[str], number: int) -> int:
    """The indent of the paragraph line ``number`` ends (its first line's: a wrapped line may be indented less)."""
    first = number
    while first > 0 and raws[first - 1].strip() and not raws[first - 1].strip().endswith("::"):
        first -= 1
    return min(indent_of(raws[first]), indent_of(raws[number]))
