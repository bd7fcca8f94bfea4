"""What a document replaced or forgotten during an embedding pass costs the vectors file, before and after.

Builds (once, then kept) a vectors file of N documents x 20 chunks x 3 parts (8 dimensions: the rows'
count is what the reads walk; pass26's move_cost.py layout, notes/pass26-26.md), and times, best of 5,
with one document's rows stored again before each round:

* ``restart``: what a pass start reads: drop_except + done + counts (9b845d0), drop_except + tally (now);
* ``replace before`` / ``forget before``: what a move that replaced or forgot a document cost until now
  (``SemanticIndex._moved``: drop_except over every row, then counts over every row);
* ``replace after`` / ``forget after``: now: drop_journals of that journal (a forgotten one's texts looked
  up by the rows_digest index) and the new generation's tally (its key's prefix);
* ``search after a drop``: the next nearest() after it, when drop_except emptied the matrix (read again)
  and now (masked in memory).

``python stress/vector_moves.py [--docs 10000] [--dir /tmp/vector_moves]``; the first run builds the file
(~1 minute at 10,000 documents) and adds the rows_digest index at its first open (~5 s). Run from a tree
before ``VectorStore.tally`` (copied there, on a file without the index) it prints the before column alone.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

from ctxtrio.store.vectors import VectorRow, VectorStore

if TYPE_CHECKING:
    from collections.abc import Callable

CHUNKS, PARTS, DIM, MODEL = 20, 3, 8, "m"


def _journal(n: int) -> str:
    return f"docs/d{n:05d}/g.jsonl"


def _rows(journal: str, rng: random.Random) -> list[VectorRow]:
    return [
        VectorRow(journal, str(c), p, 0, 1, [rng.random() for _ in range(DIM)])
        for c in range(CHUNKS)
        for p in range(PARTS)
    ]


def _built(folder: Path, docs: int) -> Path:
    path = folder / f"v-{docs}.sqlite3"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(docs)
    store = VectorStore(path)
    store.open()
    for n in range(docs):
        store.add(MODEL, DIM, _rows(_journal(n), rng))
    store.close()
    return path


def _best_ms(prepare: Callable[[], None], work: Callable[[], object], rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        prepare()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best * 1000


class _Moves:
    """The calls timed, on one open file: a victim document replaced or forgotten, a fresh one's rows read."""

    def __init__(self, store: VectorStore, docs: int) -> None:
        self.store, self.rng = store, random.Random(0)
        self.journals = [_journal(n) for n in range(docs)]
        self.victim, self.fresh = self.journals[docs // 2], "docs/new/g.jsonl"
        self.everyone, self.others = set(self.journals), set(self.journals) - {self.victim}

    def restore(self) -> None:  # the victim's rows back (its texts are new ones each time)
        self.store.add(MODEL, DIM, _rows(self.victim, self.rng))

    def forgotten(self, journal: str) -> bool:
        return journal == self.victim

    def search(self) -> None:
        self.store.nearest(MODEL, [1.0] + [0.0] * (DIM - 1), journals=None, limit=10)

    def old_restart(self) -> None:
        self.store.drop_except(MODEL, DIM, self.everyone)
        self.store.done(MODEL, DIM)
        self.store.counts(MODEL, DIM)

    def new_restart(self) -> None:
        self.store.drop_except(MODEL, DIM, self.everyone)
        self.store.tally(MODEL, DIM)

    def old_move(self, for_good: bool) -> None:
        self.store.drop_except(MODEL, DIM, self.others, forgotten=self.forgotten if for_good else None)
        self.store.counts(MODEL, DIM)

    def new_move(self, for_good: bool) -> None:
        self.store.drop_journals(MODEL, DIM, [self.victim], forgotten=self.forgotten if for_good else _kept)
        self.store.tally(MODEL, DIM, journal=self.fresh)

    def searched_then_dropped_before(self) -> None:
        self.restore()
        self.search()
        self.store.drop_except(MODEL, DIM, self.others)

    def searched_then_dropped_after(self) -> None:
        self.restore()
        self.search()
        self.store.drop_journals(MODEL, DIM, [self.victim], forgotten=self.forgotten)


def _kept(_journal: str) -> bool:
    return False


def _nothing() -> None:
    pass


def _before_only(moves: _Moves) -> None:
    """A tree before ``VectorStore.tally`` (9b845d0, b4eefd1): the before column alone."""
    print(f"restart {_best_ms(_nothing, moves.old_restart):.1f} ms")
    for label, for_good in (("replace", False), ("forget", True)):
        print(f"{label}: {_best_ms(moves.restore, functools.partial(moves.old_move, for_good)):.1f} ms")
    moves.search()
    print(f"search after a drop: {_best_ms(moves.searched_then_dropped_before, moves.search):.1f} ms")


def _both(moves: _Moves) -> None:
    before, after = _best_ms(_nothing, moves.old_restart), _best_ms(_nothing, moves.new_restart)
    print(f"restart (a pass start): before {before:.1f} ms, after {after:.1f} ms")
    for label, for_good in (("replace", False), ("forget", True)):
        before = _best_ms(moves.restore, functools.partial(moves.old_move, for_good))
        after = _best_ms(moves.restore, functools.partial(moves.new_move, for_good))
        print(f"{label}: before {before:.1f} ms, after {after:.2f} ms")
    moves.search()
    before = _best_ms(moves.searched_then_dropped_before, moves.search)
    after = _best_ms(moves.searched_then_dropped_after, moves.search)
    print(f"search after a drop: before {before:.1f} ms (matrix read again), after {after:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/vector_moves"))
    args = parser.parse_args()
    docs: int = args.docs
    store = VectorStore(_built(args.dir, docs))
    start = time.perf_counter()
    store.open()
    opened_ms = (time.perf_counter() - start) * 1000
    print(f"{docs:,} documents, {docs * CHUNKS * PARTS:,} rows, {DIM} dimensions; load {os.getloadavg()[0]:.1f}")
    print(f"open {opened_ms:.0f} ms (makes the rows_digest index the first time)")
    moves = _Moves(store, docs)
    (_both if hasattr(store, "tally") else _before_only)(moves)
    store.close()


if __name__ == "__main__":
    main()
