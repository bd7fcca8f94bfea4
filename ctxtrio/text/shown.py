"""A window of a text's whole lines as shown: which lines (:class:`Passage`), the text with cut marks
where text was left out (:func:`marked_text`), and the passage of given lines without blank or hidden
lines at its ends (:func:`passage_of`). Pure. Apart from :mod:`.passages`, which chooses the lines,
so what a window is and how it reads stands alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cutting import CUT_MARK

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .runs import Line

__all__ = ["Passage", "marked_text", "passage_of"]


@dataclass(frozen=True, slots=True)
class Passage:
    """Lines ``first_line`` .. ``last_line`` (1-based, inclusive) of a text of ``lines`` lines,
    characters ``start`` .. ``end``; ``cut_before``/``cut_after`` when text (not only
    blank lines) was left out there."""

    start: int
    end: int
    first_line: int
    last_line: int
    lines: int
    cut_before: bool
    cut_after: bool
    #: Character ranges inside ``start`` .. ``end`` left out of the text shown: HTML comment
    #: blocks (``<!-- ... -->`` on lines of their own), which a reader of the rendered page never sees,
    #: and the lines between the window and its far sentence (:func:`~.edges.far_sentence`) or a
    #: definition shown above it (:func:`~.edges.lead_sentence`).
    hidden: tuple[tuple[int, int], ...] = ()
    #: Text was left out inside: between the window and its far sentence or the definition above it.
    #: (A passage of a chunk's first and last lines may still be cut: its header names its lines.)
    cut_inside: bool = False

    @property
    def cut(self) -> bool:
        return self.cut_before or self.cut_after or self.cut_inside


def marked_text(text: str, passage: Passage) -> str:
    """The passage's text with :data:`CUT_MARK` where text was left out (around it, and in place of its hidden lines)."""
    parts: list[str] = []
    at = passage.start
    for start, end in passage.hidden:
        parts += [text[at:start], CUT_MARK]
        at = end
    body = "".join(parts) + text[at : passage.end]
    return (CUT_MARK + " " if passage.cut_before else "") + body + (" " + CUT_MARK if passage.cut_after else "")


def passage_of(text: str, lines: Sequence[Line], first: int, last: int, far: tuple[int, int] | None = None) -> Passage:
    """Lines ``first`` .. ``last`` (0-based), and the lines ``far`` after them if any, without blank
    or hidden lines at either end; its hidden lines' runs as character ranges (each with its
    line break), and the lines between the two (when they hold text) as one range without
    its last line break (its cut mark stands on a line of its own); cut before or after when
    a line that is neither was left out there."""

    def empty(n: int) -> bool:
        return lines[n].hidden or not text[lines[n].start : lines[n].end].strip()

    gap = range(0)
    if far is not None:
        gap = range(last + 1, far[0])
        if all(empty(n) for n in gap):
            gap = range(0)  # only blank or hidden lines between: shown as they are
        last = max(last, far[1])
    while first < last and empty(first):
        first += 1
    while last > first and empty(last):
        last -= 1
    start, end = lines[first].start, lines[last].end
    hidden: list[tuple[int, int]] = []
    for n in range(first, last + 1):
        if not lines[n].hidden and n not in gap:
            continue
        if hidden and not text[hidden[-1][1] : lines[n].start].strip():  # one mark for runs only blank lines part
            hidden[-1] = (hidden[-1][0], lines[n].end + 1)
        else:
            hidden.append((lines[n].start, lines[n].end + 1))
        if gap and n == gap[-1]:
            hidden[-1] = (hidden[-1][0], lines[n].end)
    return Passage(
        start, end, first + 1, last + 1, len(lines),
        cut_before=any(not empty(n) for n in range(first)),
        cut_after=any(not empty(n) for n in range(last + 1, len(lines))),
        hidden=tuple(hidden), cut_inside=bool(gap),
    )  # fmt: skip
