"""A process that writes a vectors file without end, for tests/store/test_vectors_crash.py to SIGKILL.

``python -m tests.store.vector_worker PATH SEED``: opens ``PATH`` (migrating an older file
first), prints ``open`` once it is open, then repeats: store a batch of new texts under a
journal of its own, store rows naming texts already stored under another, drop the previous
round's copy by its journal (drop_journals; forgotten every other round), drop a journal (its texts
become unnamed), and bound the unnamed texts.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from ctxtrio.store import vectors
from ctxtrio.store.vector_schema import text_digest
from ctxtrio.store.vectors import VectorRow, VectorStore

DIM = 8


def main() -> None:
    path, seed = Path(sys.argv[1]), int(sys.argv[2])
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
        named = [VectorRow(journal + "b", str(n), 0, n, n + 1, None, (0, 4), row.digest) for n, row in enumerate(rows)]
        store.add("m", DIM, named)
        # The previous round's copy goes by its journal, forgotten (its texts looked up) every other round.
        store.drop_journals("m", DIM, [f"j{seed}.{round_ - 1}b"], forgotten=lambda _journal: round_ % 2 == 0)
        kept = {journal, journal + "b"} | {f"j{seed}.{round_ - 1}b"}
        store.drop_except("m", DIM, kept)
        store.collect("m", DIM, legacy=True)


if __name__ == "__main__":
    main()
