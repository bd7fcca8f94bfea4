"""The layout of a vectors file (``vectors.sqlite3``, ``session-vectors.sqlite3``), and how a new one keeps the vectors.

A vector costs an endpoint call (all-MiniLM-L6-v2 on a GGUF server: ~34 minutes for
Python's manual); where it stands in a journal costs nothing to find again. So the file
keeps the two apart:

* ``texts``: one vector per exact input the endpoint embedded, keyed by (model, dim,
  digest), the digest being :func:`text_digest` of the exact string sent (the model
  family's document prefix, the heading trail and the part's characters). ``used`` is when
  a row last named it (milliseconds): the texts no row names are evicted oldest first.
* ``rows``: (model, dim, journal, item, part) -> the item's journal line, the characters
  of the item its part holds, and its text's digest (NULL: the item was refused for good).
  The embedder derives every row again from the journals, finding each text by its digest:
  an item whose texts are all in ``texts`` costs no request.

Versions. ``PRAGMA user_version`` is :data:`ROWS_VERSION`: the layout of ``rows`` and what
an item is embedded as (``docs/embedding.chunk_parts``, ``text/embedding.text_parts``).
Bump it when either changes: opening a file of another rows version drops ``rows`` alone,
and the next pass links every item again, sending only the texts the file never had.
:data:`TEXTS_VERSION` (in ``meta``) is the layout of ``texts`` and what a vector is (an
L2-normalised float32 array of the endpoint's answer to that exact input); only a bump
there drops the vectors, and nothing planned needs one.

Files of schema 2 and 3 (one table ``vectors``, the vector in each row) are migrated when
opened: the table is renamed ``legacy`` and the embedder takes a legacy row's vector for
a part when the row has the part's (journal, item, part) and holds the same characters
(:meth:`~.vectors.VectorStore.known`). That is exact for the parts a tree since schema 2
made: the journal line (chunk text and trail, or an entry's text) is the same, passages
have been cut by the same rule since schema 2 (3490432), leads come after them (new in 3),
and a lead shifted by one added before it (fc1fb11) holds other characters. One exception:
trees of schema 3 before fc1fb11 led a lead by the trail steps of entry kinds they did not
know yet (``struct``, ``enum``, ...), which fc1fb11 leaves out, with the same characters:
10 of the 41,066 parts of Python's manual then take the vector of their text with one more
trail step (as those trees, which never embedded them again, kept it). What no part
takes is dropped with ``legacy`` once the embedder has caught up. Schema 1 (no characters
in a row) cannot be matched: dropped.

Every change of layout is one transaction: a process killed during it leaves the file
as it was, and the next open does it again. Only a writer migrates: ``ctxtrio doctor``
without ``--repair`` reads the file through a read-only connection (:mod:`.vector_look`) and
leaves a file of another layout as it is, so an older server still running on the data
dir keeps its table.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
from typing import TYPE_CHECKING

from .._errors import StoreError
from .index_errors import for_lack_of_room
from .layout import private_file

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

__all__ = [
    "BUSY_TIMEOUT_S",
    "LEGACY_VERSIONS",
    "ROWS_VERSION",
    "TEXTS_VERSION",
    "connect",
    "delete_unnamed",
    "digests_of",
    "has_digest_index",
    "has_legacy",
    "legacy_count",
    "legacy_vectors",
    "stored_dimensions",
    "stored_texts_version",
    "text_digest",
    "transaction",
    "unnamed_texts",
    "vector_key",
]

log = logging.getLogger("ctxtrio.store")

#: 4: vectors kept by their exact text (``texts``), rows naming them by digest (``rows``).
#: (1: one whole-chunk vector a row; 2: parts with their characters; 3: entries' leads after the passages.)
ROWS_VERSION = 4
#: 1: float32, L2-normalised, of the exact input's digest.
TEXTS_VERSION = 1
#: Files whose ``vectors`` table is migrated to ``legacy`` (their rows keep the characters of each part).
LEGACY_VERSIONS = (2, 3)

_TEXTS = """
CREATE TABLE IF NOT EXISTS texts (
    model TEXT NOT NULL, dim INTEGER NOT NULL, digest BLOB NOT NULL, vec BLOB NOT NULL, used INTEGER NOT NULL,
    PRIMARY KEY (model, dim, digest)
)
"""
#: Without rowid: a row is small (~100 bytes), so the table is its key's index alone (3.6 MB less
#: over Python's manual, 41,066 rows; ``texts``, ~1.5 KB a row, keeps its rowid, as SQLite advises).
_ROWS = """
CREATE TABLE IF NOT EXISTS rows (
    model TEXT NOT NULL, dim INTEGER NOT NULL, journal TEXT NOT NULL, item TEXT NOT NULL, part INTEGER NOT NULL,
    line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, span_start INTEGER NOT NULL, span_end INTEGER NOT NULL,
    digest BLOB, PRIMARY KEY (model, dim, journal, item, part)
) WITHOUT ROWID
"""
_META = "CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
#: Rows by the text they name: whether a text is still named, asked when a document is forgotten (its texts
#: go unless another row names them), is then a lookup, not a scan of every row (a forget during a backfill
#: of 600,000 rows read them all: ``stress/vector_moves.py``). ~50 bytes a row (3% of a 384-dimension
#: file); made by the first writer that opens a file without it (5 s at 600,000 rows, once). An index,
#: not a layout change: an older tree reads and writes the file as before (SQLite keeps it up to date).
_DIGESTS = "CREATE INDEX IF NOT EXISTS rows_digest ON rows (model, dim, digest)"


#: Seconds a statement waits for another process's write lock before SQLite gives up ("database is locked").
BUSY_TIMEOUT_S = 5.0


class VectorsBusyError(StoreError):
    """Another process (a second server on the data dir, ``ctxtrio doctor``) held the vectors file's
    lock past :data:`BUSY_TIMEOUT_S`. Unlike a damaged file, waiting helps: the embedder waits and
    goes on (``store/vector_batch.py``), a search answers from BM25 meanwhile."""


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite's SQLITE_BUSY or SQLITE_LOCKED (its primary code)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def text_digest(text: str) -> bytes:
    """The key of ``text``'s vector: BLAKE2b-128 of its UTF-8 (a lone surrogate passed as is)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def vector_key(blob: bytes) -> bytes:
    """The key of a vector stored without its text (tools, tests): its bytes' digest, marked so no text's equals it."""
    return b"v" + hashlib.blake2b(blob, digest_size=15).digest()


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the vectors file at ``path``, created or brought to this layout (see the module docstring)."""
    private_file(path)  # (not SQLite's 0644: see there)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=OFF")  # derived: a lost commit is embedded again
        rows_version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        texts_version = stored_texts_version(conn)
        if rows_version != ROWS_VERSION or texts_version != TEXTS_VERSION:
            _say_if_newer(path, rows_version, texts_version)
            with transaction(conn):
                _migrate(conn, rows_version)
        _heal(conn)
        _index_digests(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
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


def _heal(conn: sqlite3.Connection) -> None:
    """Drop what a damaged page could leave behind (~50 ms at 41,000 vectors): a vector of the wrong
    length, and the rows of an item one of whose texts is gone; the next pass links that item
    again, sending only the texts gone."""
    short = "FROM texts WHERE length(vec) != 4 * dim"
    orphan = (
        "FROM rows AS r WHERE digest IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM texts AS t WHERE t.model = r.model AND t.dim = r.dim AND t.digest = r.digest)"
    )
    if conn.execute(f"SELECT 1 {short} LIMIT 1").fetchone() or conn.execute(f"SELECT 1 {orphan} LIMIT 1").fetchone():
        with transaction(conn):
            conn.execute(f"DELETE {short}")
            # Every row of such an item: one that keeps some rows counts as done (``done``) and would never be whole.
            conn.execute(
                f"DELETE FROM rows WHERE (model, dim, journal, item) IN (SELECT r.model, r.dim, r.journal, r.item {orphan})"
            )


def _index_digests(conn: sqlite3.Connection, path: Path) -> None:
    """Make ``rows_digest`` if the file lacks it. A disk without room for it leaves the file as it was (its
    vectors still found; a forgotten document's texts then checked by one scan of the rows, as before the
    index), and the next open tries again."""
    try:
        conn.execute(_DIGESTS)
    except sqlite3.Error as exc:
        if not for_lack_of_room(exc, path.parent):
            raise
        log.warning("vectors file %s: no room for its index of rows by text (%s); made at a later start", path, exc)


def has_digest_index(conn: sqlite3.Connection) -> bool:
    """Whether the file holds ``rows_digest`` (see :func:`_index_digests`)."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='index' AND name='rows_digest'").fetchone()
    return found is not None


def _say_if_newer(path: Path, rows_version: int, texts_version: int | None) -> None:
    """Warn when a newer ctxtrio wrote the file: this one takes it over as any other layout, and
    the newer one, run again on this data dir, embeds what is dropped here again."""
    if texts_version is not None and texts_version > TEXTS_VERSION:
        log.warning(
            "vectors file %s was written by a newer ctxtrio (texts %d, this one reads %d): its vectors are"
            " dropped and embedded again",
            path,
            texts_version,
            TEXTS_VERSION,
        )
    elif rows_version > ROWS_VERSION:
        log.warning(
            "vectors file %s was written by a newer ctxtrio (rows %d, this one reads %d): its rows are"
            " made again from the journals (its vectors are kept)",
            path,
            rows_version,
            ROWS_VERSION,
        )


def stored_texts_version(conn: sqlite3.Connection) -> int | None:
    """The ``texts`` layout the file's ``meta`` names (None: no ``meta``)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone() is None:
        return None
    found = conn.execute("SELECT value FROM meta WHERE name='texts'").fetchone()
    return None if found is None else int(found[0])


def _migrate(conn: sqlite3.Connection, rows_version: int) -> None:
    """Bring the file to this layout inside the caller's transaction (the user_version read before it)."""
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "texts" in tables and stored_texts_version(conn) != TEXTS_VERSION:
        conn.execute("DROP TABLE texts")  # vectors of another kind: embedded again
        conn.execute("DROP TABLE IF EXISTS rows")
        conn.execute("DROP TABLE IF EXISTS legacy")
    elif rows_version != ROWS_VERSION:
        conn.execute("DROP TABLE IF EXISTS rows")  # derived from the journals and ``texts`` again
    if "vectors" in tables:
        if rows_version in LEGACY_VERSIONS and "legacy" not in tables:
            conn.execute("ALTER TABLE vectors RENAME TO legacy")
        elif rows_version in LEGACY_VERSIONS:
            # Opened by an older tree after an upgrade (it embeds into a new ``vectors``): kept with
            # what the upgrade left (same columns in 2 and 3), the older tree's rows winning, as newer.
            conn.execute("INSERT OR REPLACE INTO legacy SELECT * FROM vectors")
            conn.execute("DROP TABLE vectors")
        else:
            conn.execute("DROP TABLE vectors")
    conn.execute(_META)
    conn.execute(_TEXTS)
    conn.execute(_ROWS)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('texts', ?)", (TEXTS_VERSION,))
    conn.execute(f"PRAGMA user_version = {ROWS_VERSION}")


#: ``meta``'s count of the times ``ctxtrio doctor --repair`` forgot refusals (a file without it: 0).
_FORGETS = "forgets"


def forgets(conn: sqlite3.Connection) -> int:
    """How many times refusals were forgotten in this file (:func:`count_forget`)."""
    found = conn.execute("SELECT value FROM meta WHERE name=?", (_FORGETS,)).fetchone()
    return 0 if found is None else int(found[0])


def count_forget(conn: sqlite3.Connection) -> None:
    """Count one forgetting of refusals, inside the caller's transaction: a running server sees the count
    change (``VectorStore.forgets_seen_elsewhere``) and looks at every item again."""
    conn.execute("INSERT INTO meta VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1", (_FORGETS,))


def has_legacy(conn: sqlite3.Connection) -> bool:
    """Whether the file holds rows of an older layout not all taken yet."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='legacy'").fetchone() is not None


def legacy_count(conn: sqlite3.Connection, model: str) -> int:
    """Vectors of ``model`` in ``legacy`` (0 without one)."""
    if not has_legacy(conn):
        return 0
    return int(conn.execute("SELECT count(*) FROM legacy WHERE model=? AND part >= 0", (model,)).fetchone()[0])


def stored_dimensions(conn: sqlite3.Connection, model: str) -> list[int]:
    """The dimensions of ``model`` in rows, texts, or ``legacy``."""
    tables = ["rows", "texts", *(["legacy"] if has_legacy(conn) else [])]
    union = " UNION ".join(f"SELECT DISTINCT dim FROM {table} WHERE model=?" for table in tables)
    return sorted(int(d) for (d,) in conn.execute(union, (model,) * len(tables)))


def legacy_vectors(
    conn: sqlite3.Connection,
    model: str,
    dim: int,
    journal: str,
    parts: Sequence[tuple[str, int, tuple[int, int], bytes]],
) -> dict[bytes, bytes]:
    """Digest -> vector of each of ``parts`` (item, part, span, digest) of ``journal`` that a
    ``legacy`` row with the same (journal, item, part) and the same characters holds."""
    taken: dict[bytes, bytes] = {}
    for item, part, span, digest in parts:
        if digest in taken:
            continue
        found = conn.execute(
            "SELECT span_start, span_end, vec FROM legacy WHERE model=? AND dim=? AND journal=? AND item=? AND part=?",
            (model, dim, journal, item, part),
        ).fetchone()
        if found is not None and (found[0], found[1]) == span and len(found[2]) == 4 * dim:
            taken[digest] = bytes(found[2])
    return taken


def digests_of(conn: sqlite3.Connection, model: str, dim: int, journal: str) -> set[bytes]:
    """The digests of the texts the rows of (``model``, ``dim``, ``journal``) name: that journal's rows alone (its
    key's prefix; asked ``digest IS NOT NULL``, SQLite scanned the ``rows_digest`` index of every row instead)."""
    found = conn.execute("SELECT digest FROM rows WHERE model=? AND dim=? AND journal=?", (model, dim, journal))
    return {bytes(digest) for (digest,) in found if digest is not None}


def delete_unnamed(conn: sqlite3.Connection, model: str, dim: int, digests: set[bytes]) -> int:
    """Delete the texts of (``model``, ``dim``) among ``digests`` that no row names; texts deleted.
    A lookup a text (the ``rows_digest`` index), however many rows the file holds; without the index
    (no room to make it), one scan of the rows."""
    if not digests:
        return 0
    if has_digest_index(conn):
        named = {
            digest
            for digest in digests
            if conn.execute(
                "SELECT 1 FROM rows WHERE model=? AND dim=? AND digest=? LIMIT 1", (model, dim, digest)
            ).fetchone()
        }
    else:
        found = conn.execute("SELECT digest FROM rows WHERE model=? AND dim=? AND digest IS NOT NULL", (model, dim))
        named = {bytes(digest) for (digest,) in found}
    gone = [(model, dim, digest) for digest in digests - named]
    conn.executemany("DELETE FROM texts WHERE model=? AND dim=? AND digest=?", gone)
    return len(gone)


def unnamed_texts(conn: sqlite3.Connection, model: str, dim: int) -> list[bytes]:
    """Digests of the texts of (``model``, ``dim``) no row names, the most recently named first.

    One lookup per text in the ``rows_digest`` index, inside SQLite: a set of every row's digest built in Python
    took 3.2 CPU-s at 600,000 rows and texts (0.43 CPU-s this way; ``stress/busy_search.py``'s file, read-only),
    with the GIL held most of it, and the embedder waited for it once caught up after rows were dropped."""
    found = conn.execute(
        "SELECT digest FROM texts AS t WHERE model=? AND dim=? AND NOT EXISTS "
        "(SELECT 1 FROM rows AS r WHERE r.model = t.model AND r.dim = t.dim AND r.digest = t.digest) "
        "ORDER BY used DESC, digest",
        (model, dim),
    )
    return [bytes(digest) for (digest,) in found]
