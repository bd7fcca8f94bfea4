"""The prose of reST text: what an extract reads once explicit markup and titles are passed over.

An extractive summary or outline line of ``.. note::``, ``.. versionchanged:: 3.6`` or a
directive's ``\\``-continued signature says nothing of its text, so :func:`without_markup` leaves
such lines out (029b92d, 467ff12). An API entry's signature is the one line that says which
function the prose under it describes: with ``signatures=True`` it goes on as its bare signature
(``dump(obj, fp, *, ...)``: the name and what a call must give) in front of the entry's first line
of prose. Pure and line by line.
"""

from __future__ import annotations

import re
from typing import Final

from ctxtrio.text.markup import API_KINDS

__all__ = ["UNDERLINE", "bare_signature", "without_markup"]

#: A line of reST explicit markup: '..' opens a directive, a comment, a link target or a footnote (not '...').
_EXPLICIT_MARKUP: Final = re.compile(r"[ \t]*\.\.(?:[ \t]|\r?\n|\Z)")
#: An API description directive (``.. function:: dump(obj, fp, *, \``, ``.. c:function:: int f(int x)``).
_API_ENTRY: Final = re.compile(
    rf"(?P<indent>[ \t]*)\.\.[ \t]+(?:[\w-]+:)?(?:{'|'.join(sorted(API_KINDS))})::[ \t]+(?P<signature>\S[^\r\n]*)"
)
#: A reST section adornment: one punctuation character repeated, three or more, alone on its line.
_ADORNMENT: Final = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*\r?\n?\Z")
#: A markdown/reST underline the sentence splitter (:mod:`ctxtrio.text.extractive`) takes for a heading's (``===``, ``---``).
UNDERLINE: Final = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
#: A directive's option line (``:synopsis: ...``, ``:noindex:``), indented under it.
_OPTION: Final = re.compile(r"[ \t]+:[\w-]+:")
#: A directive whose body is no prose, passed over like a Markdown fence: code or program output (docutils and
#: Sphinx), or a list of index entries or documents (``.. index::`` over ``single: light-weight processes`` lines:
#: _thread's outline line was "single: light-weight processes single: processes, light-weight ...").
_CODE_DIRECTIVE: Final = re.compile(
    r"[ \t]*\.\.[ \t]+"
    r"(?:code-block|code|sourcecode|doctest|testcode|testoutput|parsed-literal|productionlist|index|toctree)::"
)
#: An AsciiDoc labeled-list entry, its body on the next line ('--keep-base::' over a tab-indented line): in such
#: a text an indented block after 'label::' is the entry's text, not reST's literal block. The label is
#: :data:`~ctxtrio.text.asciidoc.LABEL`'s, written greedy: it is searched for in every text cleaned, and finds the
#: same texts in 53 ms where the lazy form takes 67 (1,672 pieces of four manuals, /tmp/tidy28/label_speed.py).
_ASCIIDOC_ENTRY: Final = re.compile(r"^[^\s][^\n]*(?::{2,4}|;;)[ \t]*\r?\n[ \t]+\S", re.MULTILINE)


def without_markup(text: str, *, headings: bool = False, signatures: bool = False) -> str:
    """``text`` without the lines of reST explicit markup (a ``..`` line, the lines its trailing backslash
    continues, and the ``:option:`` lines right under it; a directive's body stays, but for a code directive's:
    literal blocks are left out, as the sentence splitter leaves out Markdown's fences) and without reST titles
    (a line underlined by ``^^^`` or ``~~~``, which the sentence splitter does not take for a heading: an
    outline line repeating the title its trail ends with says nothing more). ``headings=True`` keeps a title
    underlined by ``===`` or ``---``, which the splitter takes for a heading. ``signatures=True`` puts an
    API entry's bare signatures (each of its lines before a blank one) in front of its body's first line:
    'dump(obj, fp, *, ...): Serialize ...'; an entry without an indented body gives nothing."""
    kept: list[str] = []
    state = ""  # after a markup line: "continued" (it ended in a backslash) or "options"
    entry: list[str] | None = None  # while an API entry's lines are read: its signature's parts so far
    pending: list[str] = []  # the entry's bare signatures, waiting for its body's first line
    indent = 0  # the entry's indentation: its body is indented further
    lines = text.splitlines(keepends=True)
    code = _literal_lines(lines, asciidoc=_ASCIIDOC_ENTRY.search(text) is not None)
    for number, line in enumerate(lines):
        if number in code:
            continue
        if _ADORNMENT.match(line) and not (headings and UNDERLINE.fullmatch(line.rstrip("\r\n"))):
            if kept and kept[-1].strip() and not kept[-1][:1].isspace():
                kept.pop()  # the title it underlines
            state, entry, pending = "", None, []
            continue
        api = _API_ENTRY.match(line) if signatures and state != "continued" else None
        if state == "continued" or api is not None:
            if api is not None:  # a new API entry: one before it whose body has no prose yet gives nothing
                indent, pending = _indent(line), []
                entry, line = [], api.group("signature")
            if entry is not None:
                entry.append(line.strip().removesuffix("\\").strip())
        elif state == "options" and entry is not None and line.strip() and _indent(line) > indent:
            if _OPTION.match(line) is None:  # a further signature: Sphinx takes one a line up to a blank one
                pending.append(bare_signature(line.strip()))
            continue
        elif _EXPLICIT_MARKUP.match(line) or (state == "options" and _OPTION.match(line)):
            entry = None if _EXPLICIT_MARKUP.match(line) else entry
        else:
            state, entry = "", None
            kept.append(_signed(line, pending, indent))
            pending = pending if not line.strip() else []
            continue
        state = "continued" if line.rstrip().endswith("\\") else "options"
        if state == "options" and entry:
            pending.append(bare_signature(" ".join(entry)))
            entry = []
    return "".join(kept)


def _literal_lines(lines: list[str], *, asciidoc: bool) -> set[int]:
    """The numbers of the non-blank lines of reST literal blocks: the body of a code directive
    (``.. code-block:: python``) and the indented block after a paragraph ending in ``::`` and a blank line
    (not in AsciiDoc, ``asciidoc``, where that is a labeled entry's text). Blank lines stay: they part the
    paragraphs either side."""
    code: set[int] = set()
    number = 0
    while number < len(lines):
        line = lines[number]
        directive = _CODE_DIRECTIVE.match(line) is not None
        literal = (
            not asciidoc
            and line.rstrip().endswith("::")
            and _EXPLICIT_MARKUP.match(line) is None
            and number + 1 < len(lines)
            and not lines[number + 1].strip()
        )
        number += 1
        if directive or literal:
            while number < len(lines) and (not lines[number].strip() or _indent(lines[number]) > _indent(line)):
                if lines[number].strip():
                    code.add(number)
                number += 1
    return code


def _signed(line: str, signatures: list[str], indent: int) -> str:
    """``line`` with ``signatures`` in front when it is their entry's body (indented under it) and not blank."""
    if not signatures or not line.strip() or _indent(line) <= indent:
        return line
    return line[: _indent(line)] + ", ".join(signatures) + ": " + line.lstrip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def bare_signature(signature: str) -> str:
    """The name and the parameters a call must give: 'dump(obj, fp, *, skipkeys=False, ..., **kw) -> None'
    as 'dump(obj, fp, *, ...)', each parameter from the first with a default (or ``**``) on as '...'. A
    signature without brackets (``.. data:: DEVNULL``, ``.. option:: -X``) or not closed is as given."""
    signature = " ".join(signature.split())
    opened = signature.find("(")
    if opened < 0:
        return signature
    params: list[str] = []
    depth, start, quote = 0, opened + 1, ""
    for at in range(opened, len(signature)):
        char = signature[at]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                params.append(signature[start:at].strip())
                break
        elif char == "," and depth == 1:
            params.append(signature[start:at].strip())
            start = at + 1
    else:
        return signature
    given = [param for param in params if param]
    optional = [at for at, param in enumerate(given) if "=" in param or param.startswith("**")]
    shown = given[: optional[0]] + ["..."] if optional else given
    return f"{signature[:opened]}({', '.join(shown)})"
