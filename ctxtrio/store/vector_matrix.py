"""The vectors of one (model, dimension) in memory, and the chunks a scan of them finds (``vectors.py``).

Search is an exact scan: every vector of the model, as one float32 matrix in memory, times
the query (``numpy``; imported only when embeddings are used). Measured at 10,000 chunks x
384 dimensions (``stress/vector_scan.py``): ~8 ms CPU a query, where pure-Python dot
products take ~160 ms and sqlite-vec's ``vec0`` ~6 ms but cannot be loaded by CPython
builds without ``enable_load_extension`` (this one).
"""

from __future__ import annotations

import contextlib
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Collection, Sequence
    from contextlib import AbstractContextManager

    import numpy as np
    import numpy.typing as npt

__all__ = ["GROWTH", "Key", "Matrix", "VectorHit", "best_chunks", "scores"]

#: How much room the matrix takes when it is full: every row is copied once per growth, and the memory held
#: is at most this much over the rows'. Growing by each batch copied every row each time: 39 ms at 41,000 x 384
#: (Python's manual), 432 ms at 200,000, with the store's lock held (a search's scan waits for it).
GROWTH = 1.25
#: Rows of journals dropped are removed from memory once they are one in _SHED_SHARE (masked till then).
_SHED_SHARE = 4
#: Rows read per chunk wanted by a search (a chunk has several parts, often near each other).
_ROWS_PER_HIT = 8


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A chunk near the query: cosine similarity of its best part, and that part's characters."""

    journal: str
    item: str
    score: float
    line_start: int
    line_end: int
    #: Characters ``start, end`` of the chunk's text that the best part holds.
    span: tuple[int, int] = (0, 0)


#: (journal, item, line_start, line_end, span_start, span_end) of one row of the matrix.
Key = tuple[str, str, int, int, int, int]


class Matrix:
    """The vectors of one (model, dim) in memory, with their keys."""

    def __init__(self, dim: int) -> None:
        import numpy as np

        self.dim = dim
        #: The vectors, a view of the first rows of ``_room`` (grown by GROWTH when full, not copied a batch).
        self.rows: npt.NDArray[np.float32] = np.zeros((0, dim), dtype=np.float32)
        self._room = self.rows
        self.keys: list[Key] = []
        #: Journal -> its id in ``row_journal`` (a journal dropped loses its id: rows stored under its name
        #: again get a new one, so they are not masked with the old).
        self.journal_ids: dict[str, int] = {}
        self.row_journal: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        #: False for a row of a journal dropped (:meth:`drop`) and not yet removed; ``dropped`` counts them.
        self.live: npt.NDArray[np.bool_] = np.ones(0, dtype=np.bool_)
        self.dropped = 0
        self._next_id = 0

    @classmethod
    def read(cls, conn: sqlite3.Connection, model: str, dim: int) -> Matrix:
        """The vectors of (``model``, ``dim``) the file on ``conn`` holds, of the right length (``vector_schema.py``'s
        layout: each row's vector is its text's); ``sqlite3.Error`` as it comes."""
        # In the primary key's order, as the rows of one table were read before texts were shared.
        rows = conn.execute(
            "SELECT r.journal, r.item, r.line_start, r.line_end, r.span_start, r.span_end, t.vec FROM rows AS r "
            "JOIN texts AS t ON t.model = r.model AND t.dim = r.dim AND t.digest = r.digest "
            "WHERE r.model=? AND r.dim=? AND r.part >= 0 AND length(t.vec) = ? ORDER BY r.journal, r.item, r.part",
            (model, dim, 4 * dim),
        ).fetchall()
        matrix = cls(dim)
        keys = [(str(j), str(i), int(a), int(b), int(c), int(d)) for j, i, a, b, c, d, _ in rows]
        matrix.extend(keys, [bytes(v) for *_, v in rows])
        return matrix

    def extend(self, keys: list[Key], blobs: list[bytes], guard: AbstractContextManager[object] | None = None) -> None:
        """Add rows. ``guard`` (the lock a scan holds, :class:`~.vector_memory.InMemory`) is held only while the
        rows become visible: the copy of every row when the room is full happens before, as the rows a scan
        reads (``rows``, the room's first rows) are not written, and only one writer (the file's lock) extends."""
        import numpy as np

        if not keys:
            return
        block = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(keys), self.dim)
        held, wanted = len(self.rows), len(self.rows) + len(keys)
        room = self._room
        if wanted > len(room):  # (a copy of every row: once in a while, not at every batch stored)
            room = np.empty((max(wanted, int(len(room) * GROWTH)), self.dim), dtype=np.float32)
            room[:held] = self.rows
        room[held:wanted] = block  # (past the rows a scan reads)
        with guard or contextlib.nullcontext():
            ids = [self._id(key[0]) for key in keys]
            self._room = room
            self.rows = room[:wanted]
            self.row_journal = np.concatenate([self.row_journal, np.asarray(ids, dtype=np.int32)])
            self.live = np.concatenate([self.live, np.ones(len(keys), dtype=np.bool_)])
            self.keys.extend(keys)

    @property
    def nbytes(self) -> int:
        """Bytes the vectors hold in memory, the room not filled yet included."""
        return int(self._room.nbytes)

    def _id(self, journal: str) -> int:
        found = self.journal_ids.get(journal)
        if found is None:
            found = self.journal_ids[journal] = self._next_id
            self._next_id += 1
        return found

    def drop(self, journals: Collection[str], guard: AbstractContextManager[object] | None = None) -> None:
        """Stop finding the rows of ``journals`` (deleted from the file): masked at once (a scan scores them
        -inf), removed from memory once they are a 1/_SHED_SHARE of the rows (one copy of the rest), never read
        from the file again: reading it all again after each document replaced or forgotten during a backfill
        cost the next search a read of every vector (``stress/vector_moves.py``). ``guard`` as for :meth:`extend`:
        held while the mask changes and the rows kept replace the rows, not while they are copied."""
        import numpy as np

        with guard or contextlib.nullcontext():
            ids = [self.journal_ids.pop(journal) for journal in journals if journal in self.journal_ids]
            if not ids:
                return
            gone = np.isin(self.row_journal, np.asarray(ids, dtype=np.int32)) & self.live
            self.live = self.live & ~gone
            self.dropped += int(gone.sum())
        if self.dropped * _SHED_SHARE >= len(self.keys):
            kept = self.live
            rows, row_journal = self.rows[kept], self.row_journal[kept]
            keys = list(itertools.compress(self.keys, kept.tolist()))
            with guard or contextlib.nullcontext():
                self.rows, self.row_journal, self._room, self.keys = rows, row_journal, rows, keys
                self.live, self.dropped = np.ones(len(keys), dtype=np.bool_), 0


def best_chunks(scores: npt.NDArray[np.float32], keys: list[Key], limit: int) -> list[VectorHit]:
    """The ``limit`` chunks of the best ``scores`` (one a row of ``keys``; -inf: not wanted), each by its best part."""
    import numpy as np

    # Several parts of one chunk may be near: take more rows than chunks wanted.
    take = min(len(scores), limit * _ROWS_PER_HIT)
    top = np.argpartition(-scores, take - 1)[:take] if take < len(scores) else np.arange(len(scores))
    hits: dict[tuple[str, str], VectorHit] = {}
    for position in top[np.argsort(-scores[top], kind="stable")]:
        score = float(scores[position])
        if score == -np.inf:
            break
        journal, item, start, end, span_start, span_end = keys[int(position)]
        if (journal, item) not in hits:
            hits[(journal, item)] = VectorHit(journal, item, score, start, end, (span_start, span_end))
        if len(hits) >= limit:
            break
    return list(hits.values())


def scores(
    matrix: Matrix, query: Sequence[float], journals: Collection[str] | None, limit: int
) -> tuple[npt.NDArray[np.float32], list[Key]] | None:
    """Every row's score against ``query`` (-inf: not wanted) and the rows' keys, None if none is wanted (the matrix's
    lock held, :class:`~.vector_memory.InMemory`: the keys and live rows change with the file)."""
    import numpy as np

    if not matrix.keys or limit <= 0:
        return None
    # einsum, not @: @ goes to OpenBLAS, whose threads spin-wait on a busy machine (13,000 x 384
    # at load 12: 7.1 ms CPU and 32 ms wall a scan with @, 2.0 ms and 9 ms with einsum's own loop).
    found = np.einsum("ij,j->i", matrix.rows, np.asarray(query, dtype=np.float32))
    if journals is not None:
        allowed = [matrix.journal_ids[j] for j in journals if j in matrix.journal_ids]
        found = np.where(np.isin(matrix.row_journal, allowed), found, -np.inf)
    if matrix.dropped:
        found = np.where(matrix.live, found, -np.inf)
    return found, matrix.keys
