"""Embedding vectors of document chunks and session entries: derived data in ``vectors.sqlite3`` beside the index.

Written only by a background embedder (``store/vector_task.py``); read by searches. The
journals stay the truth: this file may be deleted at any time (``ctxtrio doctor
--repair`` does) and the embedder rebuilds it; a damaged file is deleted and created
afresh when opened. It has its own file, not the FTS5 index's, so nothing here can
hold the store writer's lock or break a journal's indexing.

Rows are keyed by (model, dimension, journal, item, part): a chunk longer than one
embedding input is embedded in parts (see ``docs/embedding.py``) and matches by its best
part. Each row keeps the byte range of the chunk's journal line, so a search reads the
chunk alone, and the characters of the chunk's text its part holds, so a search can
show the part that matched. A chunk the endpoint refused for good gets one row of part -1 and no
vector: it counts as done (and refused), and matches only by the parts the endpoint took, if any.

A row names its vector by the digest of the exact text embedded, and the vector is kept
once per text (``vector_schema.py``: the layout, its versions, and how older files are
migrated). Before asking the endpoint, the embedder asks :meth:`VectorStore.known` which
of its texts the file holds: a chunk whose text did not change when its document was
edited and ingested again, a document forgotten and ingested again, and every row after
a change of the rows' layout cost no request. Texts no row names any more stay for that
while; :meth:`VectorStore.collect` (the embedder, once caught up after rows were dropped)
keeps at most max(SPARE_MIN, live texts / SPARE_SHARE) of them, the most recently named.

Search is an exact scan of every vector of the model, one float32 matrix in memory
(``vector_matrix.py``; one row per part, as before texts were kept apart). The matrix is
read from the file once, then grown in place as vectors are added; dropping vectors makes
the next search read it again.

The SQL of what comes in is ``vector_write.py``'s, of what goes ``vector_upkeep.py``'s. All
methods block (call them through ``trio.to_thread``); ``sqlite3.Error`` becomes ``StoreError``.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._errors import StoreError
from . import vector_counts as counting
from . import vector_schema as schema
from . import vector_upkeep as upkeep
from . import vector_write as write
from .index_errors import for_lack_of_room, is_damage, is_full
from .reading import DiskFullError
from .room import REBUILD_FACTOR, has_room
from .vector_counts import Tally
from .vector_matrix import Matrix, VectorHit
from .vector_memory import InMemory
from .vector_schema import BUSY_TIMEOUT_S, VectorsBusyError, is_busy

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator
    from pathlib import Path

__all__ = ["Tally", "VectorHit", "VectorRow", "VectorStore"]

log = logging.getLogger("ctxtrio.store")

#: What a row holds beside its vector, at most (its key columns; the room a write needs is guessed high).
_ROW_BYTES = 256
#: Texts no row names that :meth:`VectorStore.collect` keeps: at least SPARE_MIN (~3 MB at 384
#: dimensions), else one per SPARE_SHARE texts rows name (a quarter: the file stays under 1.25 times
#: what its rows need, and a document of that size forgotten and ingested again costs nothing).
SPARE_MIN = 2_000
SPARE_SHARE = 4


@dataclass(frozen=True, slots=True)
class VectorRow:
    """One embedded part of a chunk; ``part`` -1 marks a chunk refused for good, in whole or in part (no vector).

    ``span``: the characters of the chunk's text the part holds (its whole text by default).
    ``digest``: :func:`~.vector_schema.text_digest` of the exact text embedded. ``vector``
    None: the file holds that text's vector already (:meth:`VectorStore.known`). A row
    without a digest (tools storing made-up vectors) is keyed by its vector: no text finds it.
    """

    journal: str
    item: str
    part: int
    line_start: int
    line_end: int
    vector: Sequence[float] | None
    span: tuple[int, int] = (0, 0)
    digest: bytes = b""


def _error(what: str, exc: sqlite3.Error, path: Path) -> StoreError:
    """DiskFullError if ``exc`` came of a disk without room for the file, VectorsBusyError if of
    another process's lock held too long, else StoreError."""
    kind = DiskFullError if for_lack_of_room(exc, path.parent) else VectorsBusyError if is_busy(exc) else StoreError
    return kind(f"{what}: {exc}")


class VectorStore:
    """The vectors file: one connection, serialised by a lock; the matrix in memory behind its own
    (``vector_memory.py``: a search's scan never waits for a walk of the file)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._memory = InMemory()
        #: False once the file is known to hold no ``legacy`` table (None: not looked at yet).
        self._legacy: bool | None = None
        #: The file's count of forgotten refusals as this object last saw it (None: not looked at yet).
        self._forgets: int | None = None

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
            self._legacy = None
            try:
                self._conn = schema.connect(self._path)
            except sqlite3.Error as exc:
                if not is_damage(exc):
                    raise _error(f"cannot open vectors file {self._path}", exc, self._path) from exc
                log.warning("vectors file %s is unusable (%s); starting it afresh", self._path, exc)
                self._delete()
                try:
                    self._conn = schema.connect(self._path)
                except sqlite3.Error as again:
                    raise _error(f"cannot create vectors file {self._path}", again, self._path) from again

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
            self._memory.put(None)

    @contextlib.contextmanager
    def _db(self, action: str) -> Iterator[sqlite3.Connection]:
        """The connection under the lock; sqlite3 errors become StoreError (DiskFullError: no room)."""
        with self._lock:
            if self._conn is None:
                raise StoreError("vectors file is closed")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                error = DiskFullError if is_full(exc) else VectorsBusyError if is_busy(exc) else StoreError
                raise error(f"vectors file {self._path}: {action} failed: {exc}") from exc

    # -- writing ----------------------------------------------------------------------

    def add(self, model: str, dim: int, rows: Sequence[VectorRow]) -> tuple[int, int]:
        """Store ``rows`` (vectors of length ``dim``, normalised) in one transaction; (items, rows) stored.

        A row without a vector names a text the file holds (:meth:`known`); an item with a
        text the file no longer holds (evicted meanwhile by another process) is not stored, so
        the next pass embeds it. DiskFullError, and nothing stored, when the disk would keep
        less than :data:`~.room.ROOM_KEPT_BYTES` free after them (the journals come first; the
        write-ahead log a failed transaction grew keeps its size: measured, a full 4 MB tmpfs
        stayed at 0 bytes free).
        """
        import numpy as np

        values: list[write.RowValues] = []
        fresh: dict[bytes, bytes] = {}
        for row in rows:
            digest: bytes | None = None
            if row.part >= 0 and row.vector is not None:
                if len(row.vector) != dim:
                    raise StoreError(f"vector of length {len(row.vector)} stored as dimension {dim}")
                blob = np.asarray(row.vector, dtype=np.float32).tobytes()
                digest = row.digest or schema.vector_key(blob)
                fresh[digest] = blob
            elif row.part >= 0:
                digest = row.digest
            values.append((row.journal, row.item, row.part, row.line_start, row.line_end, *row.span, digest))
        size = sum(len(blob) for blob in fresh.values()) + _ROW_BYTES * len(values)
        if not has_room(self._path.parent, REBUILD_FACTOR * size):  # (the log, then the file it is copied to)
            raise DiskFullError(f"vectors file {self._path}: no room on the disk for {len(values)} more vector(s)")
        now = time.time_ns() // 1_000_000
        with self._db("add") as conn:
            kept, blobs, lost = write.store_rows(conn, model, dim, values, fresh, now)
            if self._memory.get(model, dim) is not None:
                named = [(v, digest) for v in kept if (digest := v[7]) is not None]
                keys = [(v[0], v[1], v[3], v[4], v[5], v[6]) for v, _ in named]
                self._memory.extend(model, dim, keys, [blobs[d] for _, d in named])
            if lost:
                log.info(
                    "vectors file %s: %d item(s) lost their texts meanwhile; embedded again", self._path, len(lost)
                )
            return len({(v[0], v[1]) for v in kept}), sum(v[2] >= 0 for v in kept)

    def known(
        self, model: str, dim: int, journal: str, parts: Sequence[tuple[str, int, tuple[int, int], bytes]]
    ) -> set[bytes]:
        """Of ``parts`` (item, part, span, digest) of ``journal``, the digests whose vector the file holds.

        A text not in ``texts`` is taken from an older file's row (``vector_schema.py``) of the same
        (journal, item, part) holding the same characters; those items' old rows are then deleted
        (taken or of no use). DiskFullError when the disk has no room for the texts taken."""
        with self._db("read") as conn:
            held = write.held_texts(conn, model, dim, [p[3] for p in parts])
            if self._legacy is False or all(p[3] in held for p in parts):
                return held
            if not schema.has_legacy(conn):
                self._legacy = False  # (created only by a migration at open)
                return held
            taken = schema.legacy_vectors(conn, model, dim, journal, [p for p in parts if p[3] not in held])
            items = {p[0] for p in parts if p[3] not in held}
            if not has_room(self._path.parent, REBUILD_FACTOR * (sum(map(len, taken.values())) + _ROW_BYTES)):
                raise DiskFullError(f"vectors file {self._path}: no room on the disk for {len(taken)} vector(s)")
            write.keep_taken(conn, model, dim, journal, taken, items, time.time_ns() // 1_000_000)
            return held | set(taken)

    def drop_except(
        self, model: str, dim: int | None, journals: Collection[str], *, forgotten: Callable[[str], bool] | None = None
    ) -> int:
        """Delete every row not of (``model``, ``dim``) or of a journal outside ``journals``; rows deleted.

        Texts of another model or dimension go too (no row of this model can name them).
        ``dim`` None keeps every dimension of ``model`` (not learned yet). ``forgotten``: which of
        the journals gone were removed for good (a document forgotten, not replaced by a new
        generation): the texts only their rows named go with them, and an older file's rows of
        them, since "forget" promises the text is gone; others stay a while (:meth:`collect`).
        """
        with self._db("prune") as conn:
            deleted = upkeep.drop_rows(conn, model, dim, journals, forgotten, maybe_legacy=self._legacy is not False)
            if deleted is None:
                return 0
            self._memory.put(None)  # read again (vector_task's _keep_loaded)
            return deleted

    def drop_journals(
        self, model: str, dim: int, journals: Collection[str], *, forgotten: Callable[[str], bool]
    ) -> int:
        """Delete the rows of (``model``, ``dim``) of ``journals`` (documents replaced or forgotten during a
        pass), reading only theirs; texts go as in :meth:`drop_except` (``forgotten``); rows deleted. The
        matrix drops their rows in place (:meth:`Matrix.drop <.vector_matrix.Matrix.drop>`), not read again."""
        with self._db("prune") as conn:
            deleted = upkeep.drop_journals(
                conn, model, dim, journals, forgotten, maybe_legacy=self._legacy is not False
            )
            if deleted:
                self._memory.drop(journals)
            return deleted

    def drop_items(self, model: str, journal: str, items: Collection[str]) -> int:
        """Delete the rows of ``items`` of ``journal`` (every dimension of ``model``); rows deleted."""
        with self._db("prune") as conn:
            deleted = 0
            with schema.transaction(conn):
                for item in items:
                    deleted += conn.execute(
                        "DELETE FROM rows WHERE model=? AND journal=? AND item=?", (model, journal, item)
                    ).rowcount
            if deleted:
                self._memory.put(None)  # read again (vector_task's _keep_loaded)
            return deleted

    def forget_refused(self, model: str) -> int:
        """Delete ``model``'s rows of items refused for good (a part -1 row marks one), so an embedder sends
        them again, as to a server fixed since (a larger batch); items forgotten. The rows of the parts
        taken go too (the item would count as done by them), but not their texts: sent again, the item
        costs a request for its refused parts alone."""
        with self._db("prune") as conn:
            marks, deleted = upkeep.forget_refused(conn, model)
            if deleted > marks:
                self._memory.put(None)  # it holds the parts' vectors: read again
            if self._forgets is not None:
                self._forgets = schema.forgets(conn)  # its own forgetting is not another process's
            return marks

    def forgets_seen_elsewhere(self) -> bool:
        """Whether refusals were forgotten in the file (by ``ctxtrio doctor --repair``, another process) since
        this object last looked; the first look only learns the count. Then the parts' rows of the items
        forgotten may be gone: the matrix is read again at the next search."""
        with self._db("read") as conn:
            count = schema.forgets(conn)
        seen, self._forgets = self._forgets, count
        if seen is None or seen == count:
            return False
        self._memory.put(None)
        return True

    def collect(self, model: str, dim: int, *, legacy: bool = False) -> int:
        """Evict the texts of (``model``, ``dim``) no row names, but the SPARE_MIN (or one per
        SPARE_SHARE named) most recently named; texts evicted. ``legacy``: also drop what an older
        file's rows left that no part took (call it once every item is embedded)."""
        with self._reader("collect") as reader:  # (not the file's lock: an add meanwhile does not wait)
            spares = upkeep.spare_texts(reader, model, dim, spare_min=SPARE_MIN, spare_share=SPARE_SHARE)
        with self._db("collect") as conn:
            evicted = upkeep.evict_unnamed(conn, model, dim, spares, legacy=legacy)
            if legacy:
                self._legacy = False
            return evicted

    @contextlib.contextmanager
    def _reader(self, action: str) -> Iterator[sqlite3.Connection]:
        """A connection of its own to the open file, for a long read that must not hold the file's lock (closed after);
        sqlite3 errors become StoreError as in :meth:`_db`."""
        with self._lock:
            if self._conn is None:
                raise StoreError("vectors file is closed")
        try:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
            try:
                yield conn
            finally:
                conn.close()
        except sqlite3.Error as exc:
            error = DiskFullError if is_full(exc) else VectorsBusyError if is_busy(exc) else StoreError
            raise error(f"vectors file {self._path}: {action} failed: {exc}") from exc

    # -- reading ----------------------------------------------------------------------

    def dimensions(self, model: str) -> list[int]:
        """The dimensions stored for ``model`` (in rows, texts, or an older file's rows not taken yet)."""
        with self._db("read") as conn:
            return schema.stored_dimensions(conn, model)

    def older(self, model: str) -> int:
        """Vectors of ``model`` an older file's layout holds that no part has taken yet (``vector_schema.py``)."""
        with self._db("read") as conn:
            return schema.legacy_count(conn, model)

    def done(self, model: str, dim: int, *, journal: str | None = None) -> dict[str, set[str]]:
        """Journal -> items embedded (or refused for good) for (``model``, ``dim``), of one ``journal`` if given."""
        with self._db("read") as conn:
            return counting.done_items(conn, model, dim, journal)

    def tally(self, model: str, dim: int, *, journal: str | None = None) -> dict[str, Tally]:
        """Journal -> its items with rows and their counts for (``model``, ``dim``), of one ``journal`` if given
        (its key's prefix): :meth:`done` and :meth:`counts` in one walk of the rows."""
        with self._db("read") as conn:
            return counting.item_tallies(conn, model, dim, journal)

    def counts(self, model: str, dim: int) -> tuple[int, int, int]:
        """(chunks embedded, chunks refused, vectors) for (``model``, ``dim``); a chunk refused in part is
        refused (its parts taken are among the vectors)."""
        with self._db("read") as conn:
            return counting.item_counts(conn, model, dim)

    def nearest(
        self, model: str, query: Sequence[float], *, journals: Collection[str] | None, limit: int
    ) -> list[VectorHit]:
        """The ``limit`` chunks most similar to ``query`` (normalised), best first, optionally within ``journals``;
        reads the matrix first if it is not in memory (again if rows were dropped meanwhile)."""
        while (found := self._memory.scan(model, query, journals, limit)) is None and self._conn is not None:
            self.load(model, len(query))
        return found or []

    def nearest_in_memory(
        self, model: str, query: Sequence[float], *, journals: Collection[str] | None, limit: int
    ) -> list[VectorHit] | None:
        """:meth:`nearest`, or None when the matrix is not in memory: never reads it (:meth:`load` does), and never
        takes the file's lock, which the embedder's walks hold (``vector_memory.py``). A search asks this: it runs
        in a thread its deadline cannot abandon (``vector_task.py``)."""
        return self._memory.scan(model, query, journals, limit)

    def loaded(self, model: str, dim: int) -> bool:
        """Whether the matrix of (``model``, ``dim``) is in memory (a glance: callable without the lock)."""
        return self._memory.get(model, dim) is not None

    def load(self, model: str, dim: int) -> None:
        """Read the matrix of (``model``, ``dim``) into memory unless it is there; StoreError if the read fails."""
        with self._lock:
            if self._memory.get(model, dim) is None and self._conn is not None:
                self._memory.put(self._read(self._conn, model, dim), model)

    def _read(self, conn: sqlite3.Connection, model: str, dim: int) -> Matrix:
        """The matrix of (``model``, ``dim``) as the file holds it (lock held: 5.2 s at 600,000 rows)."""
        try:
            return Matrix.read(conn, model, dim)
        except sqlite3.Error as exc:
            raise StoreError(f"vectors file {self._path}: read failed: {exc}") from exc

    def memory_bytes(self) -> int:
        """Bytes the in-memory matrix holds (0 until it is read: :meth:`load`, or the first search)."""
        return self._memory.nbytes
