"""context_recall's worst case: many entries at the size limit, one line each, every one matching.

    python stress/recall_worst.py                 # 300 entries of ~15,900 characters
    python stress/recall_worst.py --entries 100

Since context_recall gives every match too large to fit a passage share (its sentences
chosen by ``text/long_lines.py``, room a passage leaves given back to the cuts above it),
a recall cuts up to ``limit`` entries, each a search of its own over its text. This is the
input that makes that most costly: entries of ``MAX_ENTRY_CHARS`` written as one line of
short sentences (a model's unwrapped note), each holding the query's words many times, so
every entry matches and none fits whole below the largest budgets. Through the library
(``open_context``, no LLM: the estimate counts), it asks one query at budgets 250 to
100,000 tokens with ``limit`` 10 to 200 and prints, for each, the wall time of the recall,
how long the event loop went without running a 1 ms ticker task meanwhile (the packing runs
in a worker thread; what the loop does itself shows here), the entries shown and how many
of them were cut. Exits 1 when an answer's tokens (the estimate) are over its budget. Timings, not
answers, vary with the machine; nothing here is asserted about them.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

import ctxtrio
from ctxtrio.memory.model import MAX_ENTRY_CHARS

WORDS = (
    "the server writes each chunk to its journal before the index while search reads the vector rows and budget tokens"
).split()
QUERY = "journal budget vector index"
ASKS = ((250, 10), (1_000, 50), (4_000, 200), (20_000, 200), (60_000, 200), (100_000, 200))


def entry(rng: random.Random) -> str:
    """One line of short sentences, just under the entry limit."""
    sentences: list[str] = []
    size = 0
    while size < MAX_ENTRY_CHARS - 600:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))).capitalize() + "."
        sentences.append(sentence)
        size += len(sentence) + 1
    return " ".join(sentences)[: MAX_ENTRY_CHARS - 100]


async def run(entries: int, data_dir: Path) -> int:
    rng = random.Random(7)
    over = 0
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=data_dir)) as ctx:
        started = time.perf_counter()
        for _ in range(entries):
            await ctx.sessions.append("worst", entry(rng))
        print(f"{entries} entries of ~{MAX_ENTRY_CHARS:,} characters appended in {time.perf_counter() - started:.1f} s")
        gap = [0.0]

        async def tick() -> None:
            last = time.perf_counter()
            while True:
                await trio.sleep(0.001)
                now = time.perf_counter()
                gap[0] = max(gap[0], now - last)
                last = now

        async with trio.open_nursery() as nursery:
            nursery.start_soon(tick)
            for budget, limit in ASKS:
                await trio.sleep(0.05)
                gap[0] = 0.0
                started = time.perf_counter()
                got = await ctx.sessions.recall("worst", QUERY, budget_tokens=budget, limit=limit)
                took = time.perf_counter() - started
                cut = got.rendered.count("[...]")
                over += got.used_tokens > budget
                print(
                    f"budget {budget:>7,} limit {limit:>3}: {took * 1000:7.1f} ms, event loop held at most "
                    f"{gap[0] * 1000:5.1f} ms; {len(got.entries)} entries shown, {cut} cut marks, "
                    f"{got.used_tokens:,} of {budget:,} tokens"
                )
            nursery.cancel_scope.cancel()
    return 1 if over else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=300, help="entries in the session (default 300)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data_dir:
        return trio.run(run, args.entries, Path(data_dir))


if __name__ == "__main__":
    sys.exit(main())
