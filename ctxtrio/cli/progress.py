"""Progress of long subcommands (ingest, import): a tqdm bar on a terminal, plain lines otherwise.

tqdm draws the bar, rate and ETA (``pip install`` pulls it in; it has no dependencies
of its own). When stdout or stderr is not a terminal (a script, a pipe, CI), each item
is one plain line on stderr instead, with the same counts, rate and ETA, and nothing
redraws. The caller owns the timing source: ``time.monotonic`` is only read for the
rate shown to a person, never for any decision.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from .output import harmless

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Progress"]


def _size(count: float, unit: str) -> str:
    if unit != "B":
        return f"{count:,.0f}"
    for scale, name in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")):
        if count >= scale:
            return f"{count / scale:.1f} {name}"
    return f"{count:.0f} B"


class Progress:
    """Advance by ``amount`` of ``total`` (bytes when ``unit`` is ``"B"``) per finished item.

    ``quiet``: without a terminal, no line per item (the caller says what matters once).
    """

    def __init__(
        self, description: str, *, total: float, unit: str, items: int, bar: bool | None = None, quiet: bool = False
    ) -> None:
        self._description = description
        self._quiet = quiet
        self._total = total
        self._unit = unit
        self._items = items
        self._done = 0.0
        self._count = 0
        self._started = time.monotonic()
        if bar is None:
            bar = sys.stdout.isatty() and sys.stderr.isatty()
        self._bar = None
        if bar:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=description,
                unit=unit,
                unit_scale=unit == "B",
                unit_divisor=1024,
                dynamic_ncols=True,
                file=sys.stderr,
            )

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def advance(self, amount: float, note: str = "") -> None:
        """One more item finished, worth ``amount``; ``note`` says which (shown on plain lines)."""
        self._done += amount
        self._count += 1
        if self._bar is not None:
            self._bar.set_postfix_str(f"{self._count}/{self._items}", refresh=False)
            self._bar.update(amount)
            return
        if self._quiet or not note:
            return
        elapsed = max(time.monotonic() - self._started, 1e-6)
        rate = self._done / elapsed
        left = (self._total - self._done) / rate if rate > 0 else 0.0
        sys.stderr.write(
            f"{self._description} {self._count}/{self._items}, {_size(self._done, self._unit)} of "
            f"{_size(self._total, self._unit)}, {_size(rate, self._unit)}/s, ETA {left:.0f} s: {harmless(note)}\n"
        )
        sys.stderr.flush()

    def write(self, line: str) -> None:
        """One line on stderr that the bar (if any) redraws below instead of overwriting."""
        if self._bar is not None:
            self._bar.write(harmless(line), file=sys.stderr)
        else:
            sys.stderr.write(harmless(line) + "\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
