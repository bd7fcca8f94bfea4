"""How the search index fails: damaged (heal it), out of room (a full disk), held by another process,
or refused; and what each says to the person reading it.

``sqlite3.Error`` becomes one of these, or a plain ``StoreError``, here (:func:`index_error`,
:func:`refusal_message`), for :mod:`.index`.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from .._errors import StoreError
from .reading import free_bytes

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "FULL_BELOW_BYTES",
    "IndexBusyError",
    "IndexDamagedError",
    "IndexFullError",
    "file_identity",
    "for_lack_of_room",
    "is_busy",
    "is_damage",
    "is_full",
    "index_error",
    "refusal_message",
]

#: An I/O error opening the index on a disk with less than this free is taken for lack of room:
#: SQLite says "disk I/O error" (SQLITE_IOERR_SHMSIZE) when it cannot grow the ``-shm`` file of an
#: existing index on a full disk, not SQLITE_FULL (measured on a tmpfs filled to the last byte).
FULL_BELOW_BYTES = 1 << 20

_DAMAGE_CODES = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_DAMAGE_WORDS = ("malformed", "not a database", "no such table", "vtable constructor failed")


class IndexDamagedError(StoreError):
    """The index file is corrupt, lost its tables, or was deleted or replaced: heal it.

    ``corrupt`` says whether the file itself is bad (delete it) or merely not the one
    this process opened (reopen it).
    """

    def __init__(self, message: str, *, corrupt: bool) -> None:
        super().__init__(message)
        self.corrupt = corrupt


class IndexFullError(StoreError):
    """SQLite found no room on the disk for an index update (``SQLITE_FULL``).

    Unlike a busy lock, waiting does not help: only freeing space does (see
    :func:`~.batch.flush_index`, which drops the index when rows of removed journals hold it).
    """


class IndexBusyError(StoreError):
    """The index could not be opened: another process (a server writing, ``doctor --repair``) held its
    write lock past the busy wait. Unlike damage, waiting helps: opening it again later succeeds."""


def _code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def is_damage(exc: sqlite3.Error) -> bool:
    if _code(exc) in _DAMAGE_CODES:
        return True
    return any(word in str(exc).lower() for word in _DAMAGE_WORDS)


def is_busy(exc: sqlite3.Error) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock."""
    return _code(exc) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def is_full(exc: sqlite3.Error) -> bool:
    return _code(exc) == sqlite3.SQLITE_FULL


def for_lack_of_room(exc: sqlite3.Error, folder: Path) -> bool:
    """Whether opening the index in ``folder`` failed for lack of room on its disk: SQLITE_FULL, or
    an I/O error while the disk has less than :data:`FULL_BELOW_BYTES` free. Not a directory or an
    unreadable file in the index's place (SQLITE_CANTOPEN): those stay until someone fixes them."""
    if is_full(exc):
        return True
    if _code(exc) != sqlite3.SQLITE_IOERR:
        return False
    free = free_bytes(folder)
    return free is not None and free < FULL_BELOW_BYTES


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at ``path`` (None: none): another one means the index was deleted or replaced."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


def index_error(path: Path, action: str, exc: sqlite3.Error) -> StoreError:
    """What a failed read or update of the index at ``path`` raises: damage (heal it), no room, or else."""
    if is_damage(exc):
        return IndexDamagedError(f"search index {path} is damaged ({exc})", corrupt=True)
    if is_full(exc):
        return IndexFullError(f"{action}: {exc}")
    return StoreError(f"{action}: {exc}")


def refusal_message(path: Path, what: str, exc: sqlite3.Error, *, busy_s: float) -> str:
    """Why the index at ``path`` is off after it ``what`` ("cannot be opened"): until a restart, or until
    another process lets go of its lock (held past ``busy_s``); IndexFullError when its disk has no room,
    which only freeing space helps."""
    if for_lack_of_room(exc, path.parent):
        raise IndexFullError(f"the search index {path} {what}: the disk has no room ({exc})") from exc
    if is_busy(exc):
        return (
            f"the search index {path} {what}: another process held its write lock past {busy_s:g} s"
            f" ({exc}); documents can be searched and ingested once it lets go (the next search or ingest opens"
            " it again); sessions work"
        )
    return (
        f"the search index {path} {what} ({exc}): documents cannot be searched "
        "or ingested until a restart after the cause is fixed; sessions work"
    )
