"""Attack rows for ``stress/attack.py``: one module per area, each exporting ``run``.

Every module under this package defines::

    def run(work: Path) -> list[Row]: ...

which performs its attacks (subprocesses, loopback servers only, bounded in count and
time) inside ``work``, a fresh temporary folder it owns, and returns one ``Row`` per
fault. ``stress/attack.py`` discovers the modules, runs each, and prints the table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Row:
    """One fault or bad input: what was done, what should happen, what did happen."""

    fault: str
    expected: str
    result: str
    held: bool
