"""What a compaction keeps of the numbers of notes it folds (user27: "alpha note i: measured 7i ms" x75 -> "(×38)").

Three sessions, each compacted with the defaults through the library (no LLM, so the decisions-first
extract of ``text/entries.py``): the user's 75 notes "alpha note i: measured 7i ms"; 75 measurements
"measured p95 latency X ms at Y rps (run i)" with random X and Y; and ``--entries`` notes of
``user_week.py``'s shapes (decisions, findings, measurements, code, pasted logs). For each it prints the
tokens before and after, and how many of the folded entries' numbers (the distinct values written in
them) the summary states, a range "[a..b step k]" stating each value it spans.

    python stress/fold_numbers.py --entries 600
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from user_week import note

import ctxtrio

_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_RANGE = re.compile(r"\[(\d+)\.\.(\d+)(?: step (-?\d+))?\]")


def stated(summary: str) -> set[str]:
    """The numbers ``summary`` states, each value of a range included."""
    found = set(_NUMBER.findall(_RANGE.sub(" ", summary)))
    for first, last, step in _RANGE.findall(summary):
        by = int(step or (1 if int(last) >= int(first) else -1))
        found.update(str(value) for value in range(int(first), int(last) + (1 if by > 0 else -1), by))
    return found


async def measure(name: str, notes: list[tuple[str, str, list[str]]], data: Path) -> None:
    config = ctxtrio.Config(data_dir=data, llm_enabled=False, audit=False)
    async with ctxtrio.open_context(config) as ctx:
        for text, role, tags in notes:
            await ctx.sessions.append("s", text, role=role, tags=tags)  # type: ignore[arg-type]  # valid roles
        result = await ctx.sessions.compact("s")
        folded = {entry.id: entry.text for entry in await ctx.sessions.export("s")}
    summary = result.summary.text if result.summary is not None else ""
    values = {value for entry_id in result.folded for value in _NUMBER.findall(folded[entry_id])}
    kept = values & stated(summary)
    print(
        f"{name}: folded {len(result.folded)}, {result.tokens_before} -> {result.tokens_after} tokens; "
        f"numbers stated {len(kept)} of {len(values)}",
        flush=True,
    )
    for line in summary.split("\n")[:4]:
        print(f"    {line[:160]}")


async def main(entries: int, data: Path) -> None:
    rng = random.Random(27)
    alpha: list[tuple[str, str, list[str]]] = [
        (f"alpha note {i}: measured {7 * i} ms", "note", []) for i in range(1, 76)
    ]
    runs: list[tuple[str, str, list[str]]] = [
        (f"measured p95 latency {rng.randint(50, 900)} ms at {rng.randint(10, 500)} rps (run {i})", "note", [])
        for i in range(75)
    ]
    week = [note(rng, n) for n in range(entries)]
    for name, notes in (("alpha x75", alpha), ("p95 x75", runs), (f"user_week x{entries}", week)):
        await measure(name, notes, data / name.replace(" ", "-"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trio.run(main, args.entries, Path(tmp))
    sys.exit(0)
