"""Near-duplicate entries folded into one line that keeps their numbers. Pure.

:mod:`.entries` says entries equal but for digits once, with a count (issue 10: thirty
"Ran npm test: 3 failing" lines crowded out the decisions). Shown as the latest wording
and ``(×N)``, a fold of 75 notes "alpha note i: measured 7i ms" kept one measurement of 75
(user27): for notes whose numbers are the content (measurements, counts, ids, versions)
the fold lost what they were written for. A :class:`Fold` keeps the wording once and each
number that varies as a slot listing its values in the entries' order, so the n-th value
of every slot belongs to the n-th entry::

    alpha note [1..75]: measured [7..525 step 7] ms (×75)
    measured p95 latency [412, 398, 455] ms at 120 rps (run [3, 9, 17]) (×3)

A slot whose values step evenly (a counter, a run number; decimals too when each has as
many places: ``[3.2..10.2 step 1.0]``) is a range, which says every value in a few tokens;
a number equal in every entry stays as it is. When the whole list
does not fit, :meth:`Fold.line` keeps the first and last ``kept`` values of each slot and
says how many it left out between them (``[7, 14, +71 more, 518, 525]``), as the undo
brings them all back. Entries whose text differs outside the numbers ("OK!" and "ok")
do not fold this way: their latest wording stands for them, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .tokens import TokenModel

__all__ = ["Fold", "fitting_fold", "fold"]

#: A number as a reader takes it: "3.2" and "1.2.3" are one value each, not two or three.
_NUMBER: Final = re.compile(r"\d+(?:\.\d+)*")
#: A number a range can stand for: no leading zero ("007" read back from a range would be "7"), one point at most.
_DECIMAL: Final = re.compile(r"(?:0|[1-9]\d*)(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class Fold:
    """Lines equal but for their numbers: the text around the numbers, and each varying number's values."""

    #: The text between the slots (one more than ``slots``), numbers equal in every line written in.
    pieces: tuple[str, ...]
    #: Per varying number, its value in each line, in the lines' order.
    slots: tuple[tuple[str, ...], ...]
    #: Per slot, how its range names the step (:func:`_step`), or None: its values are listed.
    steps: tuple[str | None, ...]

    @property
    def count(self) -> int:
        """How many lines it folds."""
        return len(self.slots[0])

    def line(self, kept: int | None = None) -> str:
        """The folded line, every value listed (``kept`` None) or the first and last ``kept`` of each slot
        (all of them if that is every value)."""
        parts = [self.pieces[0]]
        for values, step, piece in zip(self.slots, self.steps, self.pieces[1:], strict=True):
            parts.append(_slot(values, step, kept))
            parts.append(piece)
        return f"{''.join(parts)} (×{self.count})"


def fold(lines: Sequence[str]) -> Fold | None:
    """The :class:`Fold` of ``lines`` (at least two), or None when they differ outside their numbers or
    no number varies (the latest line then says as much)."""
    if len(lines) < 2:
        return None
    split = [_NUMBER.split(line) for line in lines]
    numbers = [_NUMBER.findall(line) for line in lines]
    if any(around != split[-1] for around in split):
        return None
    pieces = [split[-1][0]]
    slots: list[tuple[str, ...]] = []
    for index, piece in enumerate(split[-1][1:]):
        values = tuple(found[index] for found in numbers)
        if all(value == values[-1] for value in values):
            pieces[-1] += values[-1] + piece
        else:
            slots.append(values)
            pieces.append(piece)
    return Fold(tuple(pieces), tuple(slots), tuple(map(_step, slots))) if slots else None


def fitting_fold(found: Fold, max_tokens: int, model: TokenModel, *, most: int | None = None) -> str | None:
    """``found``'s line with the most values (up to ``most`` at each end of a slot, None: all) that fits in
    ``max_tokens``, or None if not even the first and last of each slot do. Deterministic: a binary search
    over how many values each end keeps."""
    low, high = 1, (found.count + 1) // 2  # keeping as many at each end lists every value
    if most is not None:
        high = min(high, most)
    line = found.line(high)
    if model.estimate(line) <= max_tokens:
        return line
    best: str | None = None
    high -= 1
    while low <= high:
        middle = (low + high) // 2
        line = found.line(middle)
        if model.estimate(line) <= max_tokens:
            best, low = line, middle + 1
        else:
            high = middle - 1
    return best


def _slot(values: tuple[str, ...], step: str | None, kept: int | None) -> str:
    if step is not None:
        return f"[{values[0]}..{values[-1]}{step}]"
    if kept is None or 2 * kept >= len(values):
        return "[" + ", ".join(values) + "]"
    return "[" + ", ".join((*values[:kept], f"+{len(values) - 2 * kept} more", *values[-kept:])) + "]"


def _step(values: tuple[str, ...]) -> str | None:
    """How a range of three or more evenly stepping numbers names its step ("": 1 or -1 between whole
    numbers, else " step 7", " step 0.5"), or None when they do not step evenly. Decimals step only
    among values with as many decimals each, the step written with as many: "3.2" to "10.2" by " step 1.0"."""
    if len(values) < 3 or not all(_DECIMAL.fullmatch(value) for value in values):
        return None
    decimals = {len(value.partition(".")[2]) for value in values}
    if len(decimals) != 1:
        return None
    places = decimals.pop()
    numbers = [int(value.replace(".", "")) for value in values]  # in units of the last decimal
    step = numbers[1] - numbers[0]
    if step == 0 or any(later - earlier != step for earlier, later in zip(numbers, numbers[1:])):
        return None
    if places == 0:
        return "" if abs(step) == 1 else f" step {step}"
    sign, digits = "-" if step < 0 else "", str(abs(step)).rjust(places + 1, "0")
    return f" step {sign}{digits[:-places]}.{digits[-places:]}"
