"""The definition a window of source code documents, for passages (``docs/packing``). Pure.

A question that describes code without naming it ("the function that cancels a future if it does not finish within
a given duration") matches a definition's doc comment, and the best window of its words is that comment: a long
Javadoc, a Rust doc comment with its examples, a Python docstring. Without the line the comment documents, the
answer does not say what to call. :func:`documented_line` finds it: the first definition after a window that ends
inside the comments right above it (:func:`~.code.comment_start`), or the definition whose docstring a window
starts in.
"""

from __future__ import annotations

import re
from typing import Final

from .code import comment_start
from .definitions import definition_lines

__all__ = ["documented_line"]

#: A docstring's opening, on the line after its definition's (``"""``, ``r'''``).
_DOCSTRING: Final = re.compile(r"[ \t]*[rRbBuU]?(\"\"\"|\'\'\')")


def documented_line(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The characters of the line defining what the window ``start`` .. ``end`` of ``text`` documents, when the
    window holds the comment or docstring of a definition but not its line; None otherwise."""
    lines = definition_lines(text)
    after = next((at for at in lines if at >= end), None)
    if after is not None and comment_start(text, after) <= end:
        return after, _line_end(text, after)
    before = next((at for at in reversed(lines) if at < start), None)
    if before is None:
        return None
    line_end = _line_end(text, before)
    opening = _DOCSTRING.match(text, line_end + 1)
    if opening is None:
        return None
    closing = text.find(opening.group(1), opening.end())
    if start <= (closing if closing >= 0 else len(text)) and not any(before < at < start for at in lines):
        return before, line_end
    return None


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end
