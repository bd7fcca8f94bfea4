"""Reading a SQLite file of the data dir without writing to it or leaving files beside it.

``ctxtrio doctor`` without ``--repair`` looks at the index and the vectors files while a
server may be writing them. SQLite's ``mode=ro`` alone is not enough: a WAL-mode file that
no connection holds open has no ``-wal`` and ``-shm`` beside it, and a read-only connection
creates both (SQLite 3.22+, "Read-Only Databases" in wal.html) and, being read-only, cannot
delete them when it closes (measured: a 0-byte ``-wal`` and a 32 KB ``-shm`` left behind).
``immutable=1`` creates nothing and takes no lock, but promises that nobody changes the file
(uri.html: if it changes anyway, results may be wrong or SQLITE_CORRUPT). So, per read:

* a ``-wal`` (or a rollback ``-journal``) beside the file: a connection holds it or one died
  holding it, and its last commits may be there alone. ``mode=ro`` uses the files that are
  there, reads the WAL as any reader does (a dead writer's too: the file and its ``-wal`` stay
  as they were), and never blocks a writer. It creates one file only where a ``-wal`` lies
  without its ``-shm`` (measured: a ``-shm`` then appears; SQLite needs it to read the WAL);
* none: every commit is in the file itself. ``mode=ro&immutable=1`` reads it, and the read
  counts only if the file is still the same one, unchanged (inode, size, mtime, ctime) after
  it. A server that opens the file meanwhile writes to its own new ``-wal`` and leaves the
  file as it was until a checkpoint, so the read was of the last commit before it; if a
  checkpoint (or a writer without WAL) changed the file, the read is done again by these rules.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["read_only"]

_T = TypeVar("_T")

#: Reads of an unchanged-file guess before the last, plain ``mode=ro`` one (which may leave
#: ``-wal``/``-shm`` beside a file that changes under every try yet has no ``-wal``: a writer without WAL).
TRIES = 3


def read_only(path: Path, query: Callable[[sqlite3.Connection], _T], *, busy_s: float) -> _T:
    """``query`` on a connection to the SQLite file at ``path`` that writes nothing and creates no
    file (see the module docstring); ``busy_s``: how long a read waits for a lock. Raises
    ``sqlite3.Error`` (a missing file too: SQLITE_CANTOPEN), for the caller to translate."""
    uri = path.resolve().as_uri()
    for _ in range(TRIES):
        if _beside(path):
            return _read(f"{uri}?mode=ro", query, busy_s)
        before = _stamp(path)
        found = _read(f"{uri}?mode=ro&immutable=1", query, busy_s)
        if before is not None and _stamp(path) == before:
            return found
    return _read(f"{uri}?mode=ro", query, busy_s)


def _read(uri: str, query: Callable[[sqlite3.Connection], _T], busy_s: float) -> _T:
    with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=busy_s, check_same_thread=False)) as conn:
        return query(conn)


def _beside(path: Path) -> bool:
    """Whether a ``-wal`` or ``-journal`` lies beside ``path``."""
    return any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-journal"))


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns
