"""What a compaction costs in a long session, now that each one merges the earlier summary (3ce4baf).

A merging compaction writes its summary from every entry folded so far (``compaction/plan.py``), so
its cost grows with the session, not with the entries it adds. This imports N notes of
``user_week.py``'s shapes (decisions, findings, pasted logs of 20-200 lines, code, CJK) into one
session of the library (budget 4000, no LLM), then runs ``--rounds`` compactions with the defaults,
twelve new notes before each after the first, and prints each one's wall time and what it folded.

    python stress/compact_cost.py --entries 20000
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from user_week import note

import ctxtrio

if TYPE_CHECKING:
    from ctxtrio.store.records import JSON, Record


def records(entries: int, rng: random.Random) -> list[Record]:
    """A session record and ``entries`` notes, as an export holds them (ids e2..)."""
    found: list[Record] = [{"kind": "session", "id": "s", "ts": 1.0e9}]
    for n in range(entries):
        text, role, tags = note(rng, n)
        entry: Record = {"kind": "entry", "id": f"e{n + 2}", "seq": n + 2, "ts": 1.0e9 + n, "role": role, "text": text}
        tag_list: list[JSON] = list(tags)
        found.append(entry | {"tags": tag_list, "pinned": False})
    return found


async def main(entries: int, rounds: int, data: Path) -> None:
    rng = random.Random(25)
    config = ctxtrio.Config(data_dir=data, llm_enabled=False, audit=False, budget_tokens=4000)
    async with ctxtrio.open_context(config) as ctx:
        await ctx.sessions.import_session("s", records(entries, rng))
        for round_ in range(rounds):
            if round_:
                for n in range(12):
                    text, role, tags = note(rng, entries + 12 * round_ + n)
                    await ctx.sessions.append("s", text, role=role, tags=tags)  # type: ignore[arg-type]  # note()'s roles are valid
            started = time.perf_counter()
            result = await ctx.sessions.compact("s")
            merged = getattr(result, "merged", ())  # absent before 3ce4baf
            print(
                f"compaction {round_}: {time.perf_counter() - started:.2f} s, folded {len(result.folded)}, "
                f"merged {len(merged)}, {result.tokens_before} -> {result.tokens_after} tokens",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trio.run(main, args.entries, args.rounds, Path(tmp) / "data")
    sys.exit(0)
