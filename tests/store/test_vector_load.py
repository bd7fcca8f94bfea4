"""A search's scan never reads the matrix: ``nearest_in_memory`` says it is not in memory, ``load`` reads it; nor does it
wait for the file's lock (``vector_memory.py``)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ctxtrio.store.vector_matrix import Matrix
from ctxtrio.store.vector_memory import InMemory
from ctxtrio.store.vectors import VectorHit, VectorRow, VectorStore

if TYPE_CHECKING:
    from pathlib import Path


def test_a_scan_in_memory_waits_for_load_and_then_finds_what_nearest_finds(tmp_path: Path) -> None:
    """Opened again, the file's matrix is not in memory: the scan says so (None) and reads nothing; after
    ``load`` it finds exactly what ``nearest`` finds; rows dropped take it out of memory again."""
    path = tmp_path / "v.sqlite3"
    first = VectorStore(path)
    first.open()
    first.add("m", 2, [VectorRow("a", "0", 0, 1, 2, [1.0, 0.0]), VectorRow("b", "0", 0, 1, 2, [0.6, 0.8])])
    first.close()
    store = VectorStore(path)
    store.open()
    assert not store.loaded("m", 2)
    assert store.nearest_in_memory("m", [0.0, 1.0], journals=None, limit=5) is None
    assert store.memory_bytes() == 0  # (nothing read)
    store.load("m", 2)
    assert store.loaded("m", 2) and not store.loaded("m", 3) and not store.loaded("other", 2)
    found = store.nearest_in_memory("m", [0.0, 1.0], journals=None, limit=5)
    assert found == store.nearest("m", [0.0, 1.0], journals=None, limit=5)
    assert [h.journal for h in found or []] == ["b", "a"]
    assert store.nearest_in_memory("m", [0.0, 1.0], journals=["a"], limit=5) == store.nearest(
        "m", [0.0, 1.0], journals=["a"], limit=5
    )
    store.drop_items("m", "a", ["0"])  # (the matrix is read again after rows dropped this way)
    assert store.nearest_in_memory("m", [0.0, 1.0], journals=None, limit=5) is None
    store.load("m", 2)
    assert [h.journal for h in store.nearest_in_memory("m", [0.0, 1.0], journals=None, limit=5) or []] == ["b"]
    store.close()


def test_a_scan_in_memory_does_not_wait_for_a_walk_holding_the_files_lock(tmp_path: Path) -> None:
    """While a walk of the file holds its lock (a pass's tally, a collection: seconds at 600,000 rows), a scan of
    the matrix in memory answers, and finds what it finds once the walk is over. (The 30 s guard only turns the
    old wait into a failure, not a hang.)"""
    store = VectorStore(tmp_path / "v.sqlite3")
    store.open()
    store.add("m", 2, [VectorRow("a", "0", 0, 1, 2, [1.0, 0.0]), VectorRow("b", "0", 0, 1, 2, [0.6, 0.8])])
    store.load("m", 2)
    found: list[list[VectorHit] | None] = []
    with store._db("read"):  # as VectorStore.tally holds it
        scan = threading.Thread(
            target=lambda: found.append(store.nearest_in_memory("m", [0.0, 1.0], journals=None, limit=5))
        )
        scan.start()
        scan.join(30.0)
        waited = scan.is_alive()
    scan.join()
    assert not waited, "the scan waited for the file's lock"
    assert found == [store.nearest("m", [0.0, 1.0], journals=None, limit=5)]
    assert [h.journal for h in found[0] or []] == ["b", "a"]
    store.close()


class _Glanced(InMemory):
    """The real InMemory, glanced at (``get``, as ``VectorStore.loaded`` does without a lock) at every attribute it
    stores: what another thread sees between two stores of one ``put``."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, Matrix | None]] = []  # (glances from here on: the stores of put)

    def __setattr__(self, name: str, value: object) -> None:
        super().__setattr__(name, value)
        if name != "seen" and hasattr(self, "seen"):
            self.seen += [(model, self.get(model, 2)) for model in ("a", "b")]


def test_a_glance_never_pairs_one_models_matrix_with_the_others_name() -> None:
    """While the matrix of model "a" is replaced by model "b"'s (same dimension), a glance finds "a"'s or nothing for
    "a", "b"'s or nothing for "b": never "b"'s vectors as "a"'s (the model name and the matrix were two attributes)."""
    memory = _Glanced()
    of_a, of_b = Matrix(2), Matrix(2)
    memory.put(of_a, "a")
    memory.put(of_b, "b")
    memory.put(None)
    assert memory.seen, "no store was glanced at"
    assert all(found is None or found is {"a": of_a, "b": of_b}[model] for model, found in memory.seen), memory.seen
