"""A search's scan never reads the matrix: ``nearest_in_memory`` says it is not in memory, ``load`` reads it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.store.vectors import VectorRow, VectorStore

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
