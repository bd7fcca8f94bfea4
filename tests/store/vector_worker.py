"""A process that writes a vectors file without end, for tests/store/test_vectors_crash.py to SIGKILL.

``python -m tests.store.vector_worker PATH SEED [STEP]``: opens ``PATH`` (migrating an older file
first), prints ``open`` once it is open, then repeats: store a batch of new texts under a
journal of its own, store rows naming texts already stored under another, drop the previous
round's copy by its journal (drop_journals; forgotten every other round), drop a journal (its texts
become unnamed), and bound the unnamed texts. It prints ``stored`` once the first batch is stored.

With ``STEP`` it SIGKILLs itself at the STEP-th callback of SQLite's progress handler on the
file's connection (one every :data:`PROGRESS_OPS` virtual machine instructions, after the
open): inside a statement, at a point set by the seed, not by how fast the machine is.
"""

from __future__ import annotations

import os
import random
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ctxtrio.store import vector_schema, vectors
from ctxtrio.store.vector_schema import text_digest
from ctxtrio.store.vectors import VectorRow, VectorStore

if TYPE_CHECKING:
    import sqlite3

DIM = 8
#: SQLite instructions between two progress callbacks: a round takes 270-870 callbacks (seed 0's first ten rounds).
PROGRESS_OPS = 10


def die_at(step: int) -> None:
    """SIGKILL this process at the ``step``-th progress callback of each vectors file connection opened from now
    on (``sqlite3.Connection.set_progress_handler``: called every N instructions of a running statement)."""
    connect = vector_schema.connect

    def connect_dying(path: Path) -> sqlite3.Connection:
        conn = connect(path)
        calls = 0

        def progress() -> int:
            nonlocal calls
            calls += 1
            if calls >= step:
                os.kill(os.getpid(), signal.SIGKILL)
            return 0  # (go on)

        conn.set_progress_handler(progress, PROGRESS_OPS)
        return conn

    vector_schema.connect = connect_dying  # (VectorStore.open calls it through the module)


def main() -> None:
    path, seed = Path(sys.argv[1]), int(sys.argv[2])
    if len(sys.argv) > 3:
        die_at(int(sys.argv[3]))
    rng = random.Random(seed)
    vectors.SPARE_MIN = 20  # (eviction in every round)
    store = VectorStore(path)
    store.open()
    print("open", flush=True)
    round_ = 0
    while True:
        round_ += 1
        journal = f"j{seed}.{round_}"
        texts = [f"text {seed} {round_} {n}" for n in range(rng.randint(1, 40))]
        rows = [
            VectorRow(journal, str(n), 0, n, n + 1, [rng.random() for _ in range(DIM)], (0, 4), text_digest(text))
            for n, text in enumerate(texts)
        ]
        store.add("m", DIM, rows)
        if round_ == 1:
            print("stored", flush=True)
        named = [VectorRow(journal + "b", str(n), 0, n, n + 1, None, (0, 4), row.digest) for n, row in enumerate(rows)]
        store.add("m", DIM, named)
        # The previous round's copy goes by its journal, forgotten (its texts looked up) every other round.
        store.drop_journals("m", DIM, [f"j{seed}.{round_ - 1}b"], forgotten=lambda _journal: round_ % 2 == 0)
        kept = {journal, journal + "b"} | {f"j{seed}.{round_ - 1}b"}
        store.drop_except("m", DIM, kept)
        store.collect("m", DIM, legacy=True)


if __name__ == "__main__":
    main()
