"""Attack the server on purpose and print a table: fault, expected, result.

    python stress/attack.py            # every area under stress/attacks/
    python stress/attack.py store http # only these areas

Each area is a module of ``stress/attacks/`` (see its ``__init__``). Every attack is
bounded in count and time and talks only to loopback servers it starts itself. Exits 1
if any row did not hold.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attacks import Row


def _areas(wanted: list[str]) -> list[str]:
    package = Path(__file__).resolve().parent / "attacks"
    found = sorted(info.name for info in pkgutil.iter_modules([str(package)]) if not info.name.startswith("_"))
    unknown = [name for name in wanted if name not in found]
    if unknown:
        raise SystemExit(f"unknown area(s): {', '.join(unknown)}; known: {', '.join(found)}")
    return wanted or found


def main(argv: list[str]) -> int:
    rows: list[tuple[str, Row]] = []
    for area in _areas(argv):
        module = importlib.import_module(f"attacks.{area}")
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"ctxtrio-attack-{area}-") as work:
            area_rows: list[Row] = module.run(Path(work))
        sys.stderr.write(f"{area}: {len(area_rows)} rows in {time.perf_counter() - started:.1f} s\n")
        rows.extend((area, row) for row in area_rows)
    width = max((len(row.fault) for _, row in rows), default=5)
    sys.stdout.write(f"{'area':<10} {'fault':<{width}}  held  expected -> result\n")
    for area, row in rows:
        mark = "yes " if row.held else "NO  "
        sys.stdout.write(f"{area:<10} {row.fault:<{width}}  {mark}  {row.expected} -> {row.result}\n")
    held = sum(row.held for _, row in rows)
    sys.stdout.write(f"\n{held} of {len(rows)} held\n")
    return 0 if held == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
