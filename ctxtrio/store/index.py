"""The derived search index: SQLite FTS5 over document chunks.

The journals are the truth; this file can be deleted at any time and is rebuilt from
them. For every journal it records ``indexed_offset``, how far into the file it has
indexed, inside the same transaction as the rows. So:

* the store writer indexes what it appended in the same batch (one transaction);
* a crash between the journal fsync and the index commit leaves a gap that the next
  append or read of that journal fills from the file (``catch_up``);
* several processes sharing the data dir never index a line twice: the watermark is
  read and advanced under SQLite's write lock (``BEGIN IMMEDIATE``).

Healing: an index file that is corrupt (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``), lost
its tables, or was deleted or replaced under a running process (its inode changed) raises
:class:`IndexDamagedError`. :meth:`SearchIndex.open` heals a damaged file at once;
later, the store writer calls :meth:`SearchIndex.heal` and re-indexes every document
journal, with no restart. A corrupt file is deleted first; a replaced one is reopened
(another process may already have rebuilt it). One that another process held locked past
:data:`WRITE_BUSY_S` when it was opened is opened again by the next write or search.

What a record contributes to the index is decided by the domain that wrote it: the
index is built with a ``rows_for(record) -> [IndexRow]`` function (documents pass
:func:`ctxtrio.docs.chunks.chunk_rows`), used for catch-up and healing as well; the store
knows rows, not record schemas. Session entries are
not here: each session's recall ranks its own live entries in memory
(``memory/bm25.py``), which at 10,000 entries is ten times faster than FTS5's
``bm25()`` and needs no cross-process index at all.

All methods block; call them through ``trio.to_thread``. ``sqlite3.Error`` becomes
``StoreError`` here.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .._errors import StoreError
from .index_errors import (
    IndexBusyError,
    IndexDamagedError,
    IndexFullError,
    file_identity,
    index_error,
    is_busy,
    is_damage,
    refusal_message,
)
from .index_queries import doc_counts, inventory, journal_names, search_levels
from .index_tables import ensure_schema, forget_rows, insert_rows, set_watermark, watermark
from .layout import private_file
from .read_only import read_only
from .reading import read_journal
from .records import StoredRecord
from .rows import Hit, IndexRow, RowsFor, Table, fts_levels, no_rows

if TYPE_CHECKING:
    from ..text.neighbours import SearchWord

__all__ = ["Appended", "Forget", "IndexDamagedError", "IndexFullError", "SearchIndex"]

log = logging.getLogger("ctxtrio.store")

_T = TypeVar("_T")

Appended = tuple[str, Path, Sequence[StoredRecord], int, dict[int, list[IndexRow]]]


@dataclass(frozen=True, slots=True)
class Forget:
    """In a batch for :meth:`SearchIndex.index_batch`: drop every row and the watermark of
    ``journal`` (a journal removed or moved), in order with the appends around it."""

    journal: str


#: How long the writer waits for SQLite's write lock held by another process before it
#: defers the update (the journals are durable; the gap is filled later), and how long
#: a reader waits on a lock (rare under WAL).
WRITE_BUSY_S = 2.0
READ_BUSY_S = 5.0


class SearchIndex:
    """The FTS5 index file. One writer connection (the store writer thread) plus one
    read connection per worker thread; WAL lets reads run beside the writer."""

    def __init__(self, path: Path, rows_for: RowsFor = no_rows, *, read_only: bool = False) -> None:
        self._path = path
        #: The rows a record contributes (see the module docstring).
        self.rows_for = rows_for
        #: Only looked at (``ctxtrio doctor`` without ``--repair``): never opened for writing, each read
        #: through :func:`~.read_only.read_only`, so nothing is written, healed, created or left beside it.
        self.read_only = read_only
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        #: Why the index could not be opened ("" when it is open or was never tried).
        self.unavailable = ""
        #: Whether :attr:`unavailable` is another process's write lock held past the busy wait at open.
        self._busy = False
        #: (device, inode) of the file opened: a different one means deleted or replaced.
        self._identity: tuple[int, int] | None = None

    # -- connections -------------------------------------------------------------

    def open(self) -> bool:
        """Create or open the index; a damaged file is deleted and created afresh.

        Returns True when the file was created afresh, so the caller re-indexes the journals; raises
        IndexFullError if the disk has no room for it (the writer shelves it, :mod:`.room`)."""
        self.unavailable, self._busy = "", False
        try:
            return self._open_file()
        except sqlite3.Error as exc:
            if not is_damage(exc):
                self._busy = is_busy(exc)
                # A read-only or failing file system, a directory in the index's place: the journals are
                # still readable, so all but document search and ingest goes on; a restart tries again.
                self.unavailable = self._refused("cannot be opened", exc)
                log.warning("%s", self.unavailable)
                return False
            log.warning("search index %s is unusable (%s); rebuilding it from the journals", self._path, exc)
        self.close()
        self._delete_files()
        try:
            return self._open_file() or True
        except sqlite3.Error as exc:
            raise StoreError(self._refused("cannot be created", exc)) from exc

    def _refused(self, what: str, exc: sqlite3.Error) -> str:
        """Close what :meth:`open` opened; why the index is off (:func:`~.index_errors.refusal_message`), or
        IndexFullError (no room), with :attr:`unavailable` set to say so."""
        self.close()
        try:
            return refusal_message(self._path, what, exc, busy_s=WRITE_BUSY_S)
        except IndexFullError as full:
            self.unavailable = str(full)
            raise

    def heal(self, *, corrupt: bool) -> None:
        """Reopen the index after :class:`IndexDamagedError`, deleting it first if ``corrupt``.

        A corrupt file is deleted only if it is still the one this process opened (another process may
        already have replaced it with a fresh one). The caller then re-indexes every journal (``catch_up``)."""
        seen, busy = self._identity, self._busy
        self.close()
        if corrupt and seen is not None and file_identity(self._path) == seen:
            self._delete_files()
        why = "another process held its lock when it was opened" if busy else "file was deleted or replaced"
        log.warning(
            "search index %s healed (%s); re-indexing from the journals",
            self._path,
            "corrupt file replaced" if corrupt else why,
        )
        self.open()

    def drop(self, why: str) -> None:
        """Close the index and delete its files (their room goes back to the disk); reads say ``why``
        until :meth:`open` succeeds. Raises StoreError if a file cannot be deleted."""
        self.close()
        self._identity = None  # no file now, so none was deleted or replaced behind this process
        self.unavailable = why
        self._delete_files()

    def _open_file(self) -> bool:
        """Connect the writer and create the schema; True if the file did not exist."""
        created = not self._path.exists()
        private_file(self._path)  # (not SQLite's 0644: see there)
        self._writer = self._connect(WRITE_BUSY_S)
        upgraded = ensure_schema(self._writer)
        self._identity = file_identity(self._path)
        return created or upgraded

    def _delete_files(self) -> None:
        try:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self._path}{suffix}").unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"search index {self._path} cannot be removed: {exc.strerror or exc}") from exc

    def _connect(self, busy_s: float) -> sqlite3.Connection:
        """A connection in WAL mode; raises ``sqlite3.Error`` (callers translate it)."""
        conn = sqlite3.connect(self._path, timeout=busy_s, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # The index is derived: losing the last commits to a power cut is healed by
            # catch-up from the fsynced journals, so commits need not fsync.
            conn.execute("PRAGMA synchronous=OFF")
        except sqlite3.Error:
            conn.close()
            raise
        with self._lock:
            self._connections.append(conn)
        return conn

    def refusal(self) -> StoreError:
        """Why the index is not open: IndexBusyError if another process held its write lock at :meth:`open`
        (opened again by the next write, or read: ``StoreHandle``), else StoreError."""
        return (IndexBusyError if self._busy else StoreError)(self.unavailable or "search index is closed")

    def _check_identity(self) -> None:
        """IndexDamagedError if the file at the path is not the one opened (deleted or replaced)."""
        if self._identity is not None and file_identity(self._path) != self._identity:
            raise IndexDamagedError(f"search index {self._path} was deleted or replaced", corrupt=False)

    def _reader(self) -> sqlite3.Connection:
        if self.unavailable:
            raise self.refusal()
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect(READ_BUSY_S)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._writer = None
        self._local = threading.local()

    @contextlib.contextmanager
    def _write_txn(self) -> Iterator[sqlite3.Connection]:
        conn = self._writer
        if conn is None and self._busy:  # (the writer's thread) another process held the lock at open: try again
            self.open()
            conn = self._writer
        if conn is None:
            raise self.refusal()
        self._check_identity()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                # SQLite rolls back by itself on some errors (SQLITE_FULL among them); a ROLLBACK
                # then fails ("no transaction is active") and would hide the error that counts.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise index_error(self._path, "search index update failed", exc) from exc

    # -- writing -----------------------------------------------------------------

    def index_batch(self, appended: Sequence[Appended | Forget]) -> None:
        """Index what writer batches appended, and forget what they removed, in one transaction, in order.

        Each append is ``(journal, path, records, end, rows)``: records just appended at
        ``[records[0].offset, end)``, and precomputed rows by record offset (rows missing
        there are computed here). A gap before the records is filled from the file first.
        A :class:`Forget` drops its journal's rows (as :meth:`forget`); appends before it to
        the journal it forgets are not indexed (they would be deleted in the same transaction,
        and on a full disk inserting them first filled it with the WAL, so the removal failed).
        """
        forgotten = _forgotten_later(appended)
        with self._write_txn() as conn:
            for number, item in enumerate(appended):
                if isinstance(item, Forget):
                    forget_rows(conn, item.journal)
                    continue
                if number in forgotten:
                    continue
                journal, path, records, end, rows = item
                mark = watermark(conn, journal)
                first = records[0].offset if records else end
                if mark < first:
                    mark, _ = self._index_file_range(conn, journal, path, mark, first)
                fresh: list[tuple[IndexRow, int, int]] = []
                for record in records:
                    if record.offset < mark:
                        continue  # another process indexed it already
                    found = rows.get(record.offset)
                    for row in found if found is not None else self.rows_for(record.data):
                        fresh.append((row, record.offset, record.end))
                insert_rows(conn, journal, fresh)
                set_watermark(conn, journal, max(mark, end))

    def catch_up(self, journal: str, path: Path, size: int) -> int:
        """Index ``path`` up to ``size`` if the watermark is behind; returns rows added. A journal another
        process indexed meanwhile is seen so by a read, without the write lock that process may hold for
        its next ingest (a search then refused, "locked by another process", ~1 in 1,000 beside a bulk ingest)."""
        if self.watermark(journal) >= size:
            return 0
        with self._write_txn() as conn:
            mark = watermark(conn, journal)
            if mark >= size:
                return 0
            end, added = self._index_file_range(conn, journal, path, mark, size)
            set_watermark(conn, journal, end)
            return added

    def _index_file_range(
        self, conn: sqlite3.Connection, journal: str, path: Path, start: int, stop: int
    ) -> tuple[int, int]:
        """Index complete records in ``[start, stop)``; returns (new watermark, rows added)."""
        result = read_journal(path, start)
        end = start
        fresh: list[tuple[IndexRow, int, int]] = []
        for record in result.records:
            if record.offset >= stop:
                break
            fresh.extend((row, record.offset, record.end) for row in self.rows_for(record.data))
            end = record.end
        return max(end, min(result.end, stop)), insert_rows(conn, journal, fresh)

    def forget(self, journal: str) -> None:
        """Remove every row and the watermark of ``journal``."""
        with self._write_txn() as conn:
            forget_rows(conn, journal)

    # -- reading -----------------------------------------------------------------

    def watermark(self, journal: str) -> int:
        return self._read("search index read failed", lambda conn: watermark(conn, journal), 0)

    def journal_names(self) -> list[str]:
        """Every journal the index knows (a start's check for rows of files gone)."""
        return self._read("search index read failed", journal_names, [])

    def inventory(self) -> dict[str, tuple[int, int]]:
        """Journal name -> (indexed offset, chunk rows), for every journal the index knows (``ctxtrio doctor``)."""
        return self._read("search index read failed", inventory, {})

    def search(
        self,
        table: Table,
        query_terms: Sequence[SearchWord],
        *,
        journals: Sequence[str] | None,
        limit: int,
        common: Collection[str] = (),
    ) -> list[Hit]:
        """Best ``limit`` matches of any of ``query_terms``, optionally within ``journals``.

        Rows holding more of the words come first: the levels of :func:`~.rows.fts_levels`
        are asked in turn, each ranked by BM25, until ``limit`` rows are found. Scores are
        each row's BM25 for the whole query (see there); ``common`` words are left out of the
        last level (they add nothing to a score: see there).
        """
        levels = fts_levels(query_terms, common)
        if not levels or limit <= 0 or (journals is not None and not journals):
            return []
        self._check_identity()
        return self._read(
            "search failed", lambda conn: search_levels(conn, table, levels, journals=journals, limit=limit), []
        )

    def doc_counts(self, table: Table, terms: Sequence[str]) -> dict[str, int]:
        """How many rows of ``table`` hold each of ``terms`` (their document frequency, for
        weighing rare words above common ones: :func:`~.index_queries.doc_counts`).
        Rows of obsolete generations not yet removed count too: a statistic, not a search."""
        self._check_identity()
        return self._read(
            "search index read failed", lambda conn: doc_counts(conn, table, terms), dict.fromkeys(terms, 0)
        )

    def _read(self, action: str, query: Callable[[sqlite3.Connection], _T], absent: _T) -> _T:
        """``query`` on this thread's reader; in an index opened read-only, on a connection of its own
        (``absent`` when there is no file: none is created). sqlite3 errors become StoreError."""
        try:
            if not self.read_only:
                return query(self._reader())
            if not self._path.exists():
                return absent
            return read_only(self._path, query, busy_s=READ_BUSY_S)
        except sqlite3.Error as exc:
            raise index_error(self._path, action, exc) from exc


def _forgotten_later(batch: Sequence[Appended | Forget]) -> set[int]:
    """Places in ``batch`` of the appends to a journal that a later :class:`Forget` drops."""
    forgets: set[str] = set()
    places: set[int] = set()
    for number in reversed(range(len(batch))):
        item = batch[number]
        if isinstance(item, Forget):
            forgets.add(item.journal)
        elif item[0] in forgets:
            places.add(number)
    return places
