"""The matrix a :class:`~.vectors.VectorStore` keeps in memory, behind a lock of its own.

A search's scan (:meth:`InMemory.scan`) takes only this lock, never the file's: the file's lock is
held by the background embedder's walks of every row (a pass's tally, 0.55 s at 600,000 rows;
its drop of rows gone, 0.14 s; a collection of texts no row names), and a search waited for them
in a worker thread its QUERY_S deadline cannot abandon (``stress/busy_search.py``). The file stays
written by one writer: every change to the matrix is made by a caller holding the file's lock
(:meth:`InMemory.extend` after rows are stored, :meth:`InMemory.drop` after they are deleted,
:meth:`InMemory.put` after a read), so the matrix follows the file's commits in order, and this
lock is held only while a change becomes visible, not while rows are read or copied.

Lock order: the file's lock, then this one; a scan holds this one alone.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from .vector_matrix import Matrix, VectorHit, best_chunks, scores

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from .vector_matrix import Key

__all__ = ["InMemory"]


class InMemory:
    """The matrix of one model's vectors (one dimension), or none (not read yet, or rows dropped since)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: (model, its matrix), one attribute: a glance without the lock (:meth:`get`) reads the pair
        #: as one :meth:`put` made it, never one's matrix beside the other's model name.
        self._held: tuple[str, Matrix] | None = None

    def get(self, model: str, dim: int) -> Matrix | None:
        """The matrix of (``model``, ``dim``) if it is in memory (a glance: no lock)."""
        held = self._held
        return held[1] if held is not None and held[0] == model and held[1].dim == dim else None

    @property
    def nbytes(self) -> int:
        """Bytes the matrix holds (0 when none is in memory)."""
        held = self._held
        return 0 if held is None else held[1].nbytes

    def put(self, matrix: Matrix | None, model: str = "") -> None:
        """Keep ``matrix`` (just read, file's lock held), or none: rows were dropped, it is read again later."""
        with self._lock:
            self._held = None if matrix is None else (model, matrix)

    def extend(self, model: str, dim: int, keys: list[Key], blobs: list[bytes]) -> None:
        """Add rows just stored (file's lock held) to the matrix of (``model``, ``dim``) if it is in memory."""
        matrix = self.get(model, dim)
        if matrix is not None:
            matrix.extend(keys, blobs, self._lock)

    def drop(self, journals: Collection[str]) -> None:
        """Stop finding the rows of ``journals``, just deleted (file's lock held)."""
        held = self._held
        if held is not None:
            held[1].drop(journals, self._lock)

    def scan(
        self, model: str, query: Sequence[float], journals: Collection[str] | None, limit: int
    ) -> list[VectorHit] | None:
        """The ``limit`` chunks most similar to ``query``, best first, optionally within ``journals``; None when
        the matrix of (``model``, the query's length) is not in memory. Waits for no walk of the file."""
        with self._lock:
            matrix = self.get(model, len(query))
            if matrix is None:
                return None
            scored = scores(matrix, query, journals, limit)
        return [] if scored is None else best_chunks(*scored, limit)
