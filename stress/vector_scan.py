"""How to search 10,000 chunk vectors: numpy scan vs pure Python vs sqlite-vec (why store/vectors.py uses numpy).

Builds N random unit vectors of D dimensions (default 10,000 x 384, all-MiniLM-L6-v2's
size), stores them in a VectorStore like the embedder does, and times one query:

* ``VectorStore.nearest`` (float32 matrix in memory, one matrix-vector product);
* its first call, which reads the matrix from the file;
* pure-Python dot products over ``array('f')`` rows (the no-dependency option);
* sqlite-vec's ``vec0`` k-NN, when ``sqlite_vec`` and ``apsw`` are importable (CPython's
  own sqlite3 here has no ``enable_load_extension``, so sqlite-vec needs another binding).

Prints CPU and wall milliseconds per query, the load average, and the file size.
``python stress/vector_scan.py [--n 10000] [--dim 384]``.
"""

from __future__ import annotations

import argparse
import array
import operator
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import numpy as np

from ctxtrio.store.vectors import VectorRow, VectorStore

if TYPE_CHECKING:
    from collections.abc import Callable


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _time(name: str, run: Callable[[], object], reps: int) -> None:
    run()
    cpu, wall = _cpu(), time.perf_counter()
    for _ in range(reps):
        run()
    print(
        f"{name:<42} {(_cpu() - cpu) / reps * 1000:8.2f} ms CPU {(time.perf_counter() - wall) / reps * 1000:8.2f} ms wall"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args()
    n, dim = args.n, args.dim
    print(f"{n} vectors x {dim} dims; load average {os.getloadavg()[0]:.2f}")
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[123] + 0.1 * rng.standard_normal(dim).astype(np.float32)
    query /= np.linalg.norm(query)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.sqlite3"
        store = VectorStore(path)
        store.open()
        store.add(
            "m",
            dim,
            [VectorRow(f"docs/d{i // 10}/g.jsonl", str(i % 10), 0, 0, 0, matrix[i].tolist()) for i in range(n)],
        )
        qlist = query.tolist()
        started = _cpu()
        store.nearest("m", qlist, journals=None, limit=10)
        print(f"{'first search (reads the matrix)':<42} {(_cpu() - started) * 1000:8.2f} ms CPU")
        _time("VectorStore.nearest (numpy, in memory)", lambda: store.nearest("m", qlist, journals=None, limit=10), 50)
        some = [f"docs/d{i}/g.jsonl" for i in range(0, n // 10, 3)]
        _time("  ... within a third of the journals", lambda: store.nearest("m", qlist, journals=some, limit=10), 20)
        print(f"{'file size':<42} {path.stat().st_size / 1e6:8.1f} MB; matrix {store.memory_bytes() / 1e6:.1f} MB")
        store.close()
    rows = [array.array("f", matrix[i].tobytes()) for i in range(n)]
    qa = array.array("f", query.tobytes())
    _time("pure Python dot products", lambda: max(range(n), key=lambda i: sum(map(operator.mul, rows[i], qa))), 2)
    try:
        import apsw  # type: ignore[import-not-found]  # optional, for the comparison only
        import sqlite_vec  # type: ignore[import-not-found]  # optional, for the comparison only
    except ImportError:
        print("sqlite-vec: not measured (pip install sqlite-vec apsw to compare)")
        return
    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{dim}] distance_metric=cosine)")
    with conn:
        conn.executemany("INSERT INTO v(rowid, embedding) VALUES (?, ?)", [(i, matrix[i].tobytes()) for i in range(n)])
    sql = "SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = 10"
    _time("sqlite-vec vec0 k-NN (apsw)", lambda: list(conn.execute(sql, (query.tobytes(),))), 50)


if __name__ == "__main__":
    main()
