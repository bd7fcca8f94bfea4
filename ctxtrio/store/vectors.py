"""Embedding vectors of document chunks: derived data in ``vectors.sqlite3`` beside the index.

Written only by the background embedder (``docs/embedding.py``); read by searches. The
journals stay the truth: this file may be deleted at any time (``ctxtrio doctor
--repair`` does) and the embedder rebuilds it; a damaged file is deleted and created
afresh when opened. It has its own file, not the FTS5 index's, so nothing here can
hold the store writer's lock or break a journal's indexing.

Rows are keyed by (model, dimension, journal, item, part): a chunk longer than one
embedding input is embedded in parts (see ``docs/embedding.py``) and matches by its best
part. Each row keeps the byte range of the chunk's journal line, so a search reads the
chunk alone, and the characters of the chunk's text its part holds, so a search can
show the part that matched. A chunk the endpoint refused for good gets one row of part -1 and no
vector: it counts as done and never matches.

Search is an exact scan: every vector of the model, as one float32 matrix in memory,
times the query (``numpy``; imported only when embeddings are used). Measured at
10,000 chunks x 384 dimensions (``stress/vector_scan.py``): ~8 ms CPU a query, where
pure-Python dot products take ~160 ms and sqlite-vec's ``vec0`` ~6 ms but cannot be
loaded by CPython builds without ``enable_load_extension`` (this one). The matrix is
read from the file once, then grown in place as vectors are added; dropping vectors
makes the next search read it again.

All methods block (call them through ``trio.to_thread``); ``sqlite3.Error`` becomes
``StoreError``.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._errors import StoreError
from .index_errors import for_lack_of_room, is_damage, is_full
from .reading import DiskFullError
from .room import REBUILD_FACTOR, has_room

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator
    from pathlib import Path

    import numpy as np
    import numpy.typing as npt

__all__ = ["VectorHit", "VectorRow", "VectorStore"]

log = logging.getLogger("ctxtrio.store")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL, dim INTEGER NOT NULL, journal TEXT NOT NULL, item TEXT NOT NULL, part INTEGER NOT NULL,
    line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, span_start INTEGER NOT NULL, span_end INTEGER NOT NULL,
    vec BLOB NOT NULL, PRIMARY KEY (model, dim, journal, item, part)
)
"""
#: 2: each row keeps the characters of the chunk its part embeds (span_start, span_end).
#: 3: a document chunk's parts end with its entries' leads (docs/embedding.chunk_parts, text/leads.py);
#: a file of 2 lacks them, and only a new embedding of each chunk adds them.
SCHEMA_VERSION = 3
#: Rows read per chunk wanted by a search (a chunk has several parts, often near each other).
_ROWS_PER_HIT = 8
#: What a row holds beside its vector, at most (its key columns; the room a write needs is guessed high).
_ROW_BYTES = 256


@dataclass(frozen=True, slots=True)
class VectorRow:
    """One embedded part of a chunk; ``vector`` None marks a chunk refused for good.

    ``span``: the characters of the chunk's text the part holds (its whole text by default).
    """

    journal: str
    item: str
    part: int
    line_start: int
    line_end: int
    vector: Sequence[float] | None
    span: tuple[int, int] = (0, 0)


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


def _open_error(what: str, exc: sqlite3.Error, path: Path) -> StoreError:
    """DiskFullError if ``exc`` came of a disk without room for the file, else StoreError."""
    return (DiskFullError if for_lack_of_room(exc, path.parent) else StoreError)(f"{what}: {exc}")


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction. SQLite rolls back by itself on some errors (SQLITE_FULL among them):
    a ROLLBACK then fails ("no transaction is active") and would hide the error that counts."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


#: (journal, item, line_start, line_end, span_start, span_end) of one row of the matrix.
_Key = tuple[str, str, int, int, int, int]


class _Matrix:
    """The vectors of one (model, dim) in memory, with their keys."""

    def __init__(self, dim: int) -> None:
        import numpy as np

        self.dim = dim
        self.rows: npt.NDArray[np.float32] = np.zeros((0, dim), dtype=np.float32)
        self.keys: list[_Key] = []
        self.journal_ids: dict[str, int] = {}
        self.row_journal: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)

    def extend(self, keys: list[_Key], blobs: list[bytes]) -> None:
        import numpy as np

        if not keys:
            return
        block = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(keys), self.dim)
        ids = [self.journal_ids.setdefault(key[0], len(self.journal_ids)) for key in keys]
        self.rows = np.concatenate([self.rows, block]) if len(self.rows) else block.copy()
        self.row_journal = np.concatenate([self.row_journal, np.asarray(ids, dtype=np.int32)])
        self.keys.extend(keys)


class VectorStore:
    """The vectors file: one connection, serialised by a lock (every statement is short)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._matrix: _Matrix | None = None
        self._matrix_model = ""

    @property
    def path(self) -> Path:
        return self._path

    def open(self) -> None:
        """Create or open the file; a damaged or foreign one is deleted and created afresh.

        Anything else is no reason to delete vectors that cost an endpoint call each: a disk
        without room for the file's logs is DiskFullError (SQLite says "disk I/O error" when it
        cannot grow ``-shm``: such a file was deleted as damaged before), other failures StoreError.
        """
        with self._lock:
            try:
                self._conn = self._connect()
            except sqlite3.Error as exc:
                if not is_damage(exc):
                    raise _open_error(f"cannot open vectors file {self._path}", exc, self._path) from exc
                log.warning("vectors file %s is unusable (%s); starting it afresh", self._path, exc)
                self._delete()
                try:
                    self._conn = self._connect()
                except sqlite3.Error as again:
                    raise _open_error(f"cannot create vectors file {self._path}", again, self._path) from again

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False, timeout=5.0)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=OFF")  # derived: a lost commit is embedded again
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version not in (0, SCHEMA_VERSION):  # derived data: an older layout is embedded again
                conn.execute("DROP TABLE IF EXISTS vectors")
            conn.execute(_SCHEMA)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _delete(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        try:
            for suffix in ("", "-wal", "-shm"):
                self._path.with_name(self._path.name + suffix).unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"vectors file {self._path} cannot be removed: {exc.strerror or exc}") from exc

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
            self._conn = None
            self._matrix = None

    @contextlib.contextmanager
    def _db(self, action: str) -> Iterator[sqlite3.Connection]:
        """The connection under the lock; sqlite3 errors become StoreError (DiskFullError: no room)."""
        with self._lock:
            if self._conn is None:
                raise StoreError("vectors file is closed")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                error = DiskFullError if is_full(exc) else StoreError
                raise error(f"vectors file {self._path}: {action} failed: {exc}") from exc

    # -- writing ----------------------------------------------------------------------

    def add(self, model: str, dim: int, rows: Sequence[VectorRow]) -> None:
        """Store ``rows`` (vectors of length ``dim``, normalised) in one transaction.

        DiskFullError, and nothing stored, when the disk would keep less than
        :data:`~.room.ROOM_KEPT_BYTES` free after them (the journals come first; the write-ahead log
        a failed transaction grew keeps its size: measured, a full 4 MB tmpfs stayed at 0 bytes free).
        """
        import numpy as np

        values = []
        for row in rows:
            blob = b"" if row.vector is None else np.asarray(row.vector, dtype=np.float32).tobytes()
            if row.vector is not None and len(row.vector) != dim:
                raise StoreError(f"vector of length {len(row.vector)} stored as dimension {dim}")
            values.append((model, dim, row.journal, row.item, row.part, row.line_start, row.line_end, *row.span, blob))
        size = sum(len(value[9]) + _ROW_BYTES for value in values)
        if not has_room(self._path.parent, REBUILD_FACTOR * size):  # (the log, then the file it is copied to)
            raise DiskFullError(f"vectors file {self._path}: no room on the disk for {len(values)} more vector(s)")
        with self._db("add") as conn:
            with _transaction(conn):
                conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
            matrix = self._matrix
            if matrix is not None and self._matrix_model == model and matrix.dim == dim:
                fresh = [v for v in values if v[9]]
                matrix.extend([(v[2], v[3], v[5], v[6], v[7], v[8]) for v in fresh], [v[9] for v in fresh])

    def drop_except(self, model: str, dim: int | None, journals: Collection[str]) -> int:
        """Delete every row not of (``model``, ``dim``) or of a journal outside ``journals``; rows deleted.

        ``dim`` None keeps every dimension of ``model`` (not learned yet).
        """
        with self._db("prune") as conn:
            found = conn.execute("SELECT DISTINCT model, dim, journal FROM vectors").fetchall()
            gone = [(m, d, j) for m, d, j in found if m != model or (dim is not None and d != dim) or j not in journals]
            if not gone:
                return 0
            deleted = 0
            with _transaction(conn):
                for key in gone:
                    deleted += conn.execute("DELETE FROM vectors WHERE model=? AND dim=? AND journal=?", key).rowcount
            self._matrix = None  # read again at the next search
            return deleted

    def drop_items(self, model: str, journal: str, items: Collection[str]) -> int:
        """Delete the rows of ``items`` of ``journal`` (every dimension of ``model``); rows deleted."""
        with self._db("prune") as conn:
            deleted = 0
            with _transaction(conn):
                for item in items:
                    deleted += conn.execute(
                        "DELETE FROM vectors WHERE model=? AND journal=? AND item=?", (model, journal, item)
                    ).rowcount
            if deleted:
                self._matrix = None  # read again at the next search
            return deleted

    # -- reading ----------------------------------------------------------------------

    def dimensions(self, model: str) -> list[int]:
        """The dimensions stored for ``model``."""
        with self._db("read") as conn:
            return [int(d) for (d,) in conn.execute("SELECT DISTINCT dim FROM vectors WHERE model=?", (model,))]

    def done(self, model: str, dim: int, *, journal: str | None = None) -> dict[str, set[str]]:
        """Journal -> items embedded (or refused for good) for (``model``, ``dim``), of one ``journal`` if given."""
        where, args = ("", (model, dim)) if journal is None else (" AND journal=?", (model, dim, journal))
        with self._db("read") as conn:
            found: dict[str, set[str]] = {}
            for name, item in conn.execute(
                f"SELECT DISTINCT journal, item FROM vectors WHERE model=? AND dim=?{where}", args
            ):
                found.setdefault(str(name), set()).add(str(item))
            return found

    def counts(self, model: str, dim: int) -> tuple[int, int, int]:
        """(chunks embedded, chunks refused, vectors) for (``model``, ``dim``)."""
        with self._db("read") as conn:
            chunks, refused, vectors = conn.execute(
                "SELECT count(DISTINCT journal || char(0) || item), "
                "count(DISTINCT CASE WHEN part < 0 THEN journal || char(0) || item END), sum(part >= 0) "
                "FROM vectors WHERE model=? AND dim=?",
                (model, dim),
            ).fetchone()
            return int(chunks or 0) - int(refused or 0), int(refused or 0), int(vectors or 0)

    def nearest(
        self, model: str, query: Sequence[float], *, journals: Collection[str] | None, limit: int
    ) -> list[VectorHit]:
        """The ``limit`` chunks most similar to ``query`` (normalised), best first, optionally within ``journals``."""
        import numpy as np

        with self._lock:
            matrix = self._loaded(model, len(query))
            if matrix is None or not matrix.keys or limit <= 0:
                return []
            # einsum, not @: @ goes to OpenBLAS, whose threads spin-wait on a busy machine (13,000 x 384
            # at load 12: 7.1 ms CPU and 32 ms wall a scan with @, 2.0 ms and 9 ms with einsum's own loop).
            scores = np.einsum("ij,j->i", matrix.rows, np.asarray(query, dtype=np.float32))
            if journals is not None:
                allowed = [matrix.journal_ids[j] for j in journals if j in matrix.journal_ids]
                scores = np.where(np.isin(matrix.row_journal, allowed), scores, -np.inf)
            keys = matrix.keys
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

    def _loaded(self, model: str, dim: int) -> _Matrix | None:
        """The in-memory matrix of (``model``, ``dim``), read from the file if needed (lock held)."""
        if self._matrix is not None and self._matrix_model == model and self._matrix.dim == dim:
            return self._matrix
        if self._conn is None:
            return None
        try:
            rows = self._conn.execute(
                "SELECT journal, item, line_start, line_end, span_start, span_end, vec FROM vectors "
                "WHERE model=? AND dim=? AND part >= 0",
                (model, dim),
            ).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"vectors file {self._path}: read failed: {exc}") from exc
        matrix = _Matrix(dim)
        keys = [(str(j), str(i), int(a), int(b), int(c), int(d)) for j, i, a, b, c, d, _ in rows]
        matrix.extend(keys, [bytes(v) for *_, v in rows])
        self._matrix, self._matrix_model = matrix, model
        return matrix

    def memory_bytes(self) -> int:
        """Bytes the in-memory matrix holds (0 before the first search)."""
        matrix = self._matrix
        return 0 if matrix is None else int(matrix.rows.nbytes)
