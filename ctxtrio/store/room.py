"""Journals first on a full disk: the derived index gives its room to them, and comes back once there is room.

The journals are the data of record; the search index (:mod:`.index`) is derived from them
and can be rebuilt at any time. On a full disk both want the same room, and the index must
never cost a journal write its room:

* an index update that finds no room (``SQLITE_FULL``: :class:`~.index_errors.IndexFullError`)
  shelves the index (:func:`shelve`): its connections are closed and its files deleted.
  Deleting is what gives the room back: a rolled-back SQLite transaction leaves the
  write-ahead log at the size it grew to, and a checkpoint that would shrink it needs room
  itself (``PRAGMA wal_checkpoint(TRUNCATE)`` fails with 0 bytes free);
* a journal write that finds no room (:class:`~.reading.DiskFullError`) shelves the index
  too, once the index flush in progress ends, and is tried once more (:func:`give_way`);
* an index that cannot even be opened for lack of room, at startup, is shelved as well
  (:func:`~.index_flush.open_index`);
* a shelved index is rebuilt from the journals (:func:`~.index_flush.rebuild`) by the next
  index flush, or the next search, that finds :func:`room_to_rebuild`. Until then searches
  say why; no restart is needed.

:attr:`~.handle.IndexHealth.writing` keeps shelving apart from an index flush running in
another thread. All of it blocks: call it in worker threads.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import StoreError
from .layout import document_folders, generation_files
from .reading import free_bytes, store_error

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .index import SearchIndex
    from .layout import DataDir
    from .writer_state import IndexHealth

__all__ = [
    "REBUILD_FACTOR",
    "REBUILD_LOG_BYTES",
    "REBUILD_LOG_FACTOR",
    "ROOM_KEPT_BYTES",
    "give_way",
    "has_room",
    "rebuild_needs_bytes",
    "room_to_rebuild",
    "shelve",
    "shelve_all_the_same",
]

log = logging.getLogger("ctxtrio.store")

#: Free bytes a rebuild needs per byte of document journals. Measured: the index of 100 files of
#: python3.11-doc's library/ holds 1.67x their journals' bytes (3,719,168 against 2,221,786;
#: /tmp/diskfull/ratio.py), and its write-ahead log needs room beside it while it is built.
REBUILD_FACTOR = 2
#: Free bytes a rebuild needs beside the index for its write-ahead log: the pages it writes (FTS5's
#: segment merges write several times the index's final size) until the log reaches SQLite's
#: 1,000-page autocheckpoint (4 MB), after which the log is reused without shrinking. So the log
#: takes REBUILD_LOG_FACTOR per journal byte, at most REBUILD_LOG_BYTES. Measured, index and log at
#: their peak while a start rebuilt the index of python3.11-doc's pages: 5.48 MB for the first 60
#: (0.78 MB of journals: 7.1x) and 28.1 MB for all 497 (13.8 MB: 2.04x). Twice the journals alone
#: (before) let a rebuild begin that filled the disk, was shelved again and began again at the next
#: search, the writer, and every ingest, waiting on it each time (a 40 MB tmpfs, 8 clients ingesting).
REBUILD_LOG_FACTOR = 6
REBUILD_LOG_BYTES = 8 << 20
#: Free bytes a rebuild leaves for the journals beyond what it needs itself.
ROOM_KEPT_BYTES = 1 << 20


def shelve(index: SearchIndex, health: IndexHealth, cause: str) -> None:
    """Close the index and delete its files, so their room goes to the journals; searches say
    why until it is rebuilt. The caller holds ``health.writing``. Raises StoreError if a file
    cannot be deleted (the index is closed and shelved all the same)."""
    health.shelved = True
    health.shelves += 1
    health.lagging.clear()  # the rebuild indexes every journal there is then
    health.unforgotten.clear()
    why = (
        f"the search index was set aside to leave the disk's room to the journals ({cause}); documents "
        "can be searched again once there is room (it is rebuilt by itself); sessions and ingests work"
    )
    log.warning("%s", why)
    index.drop(why)


def shelve_all_the_same(index: SearchIndex, health: IndexHealth, cause: str) -> None:
    """:func:`shelve`, and a file that cannot be deleted is only logged (the index is off all the same)."""
    try:
        shelve(index, health, cause)
    except StoreError as exc:
        log.warning("%s", exc)


def give_way(index: SearchIndex, health: IndexHealth) -> None:
    """A journal write found no room: shelve the index, after the index flush in progress ends
    (which shelves it itself if it too finds no room). The caller then writes the journal again
    (whatever shelving found: the journal says what it finds)."""
    with health.writing:
        if not health.shelved:
            shelve_all_the_same(index, health, "a journal write found no room")


def has_room(folder: Path, size: int) -> bool:
    """Whether the disk of ``folder`` keeps :data:`ROOM_KEPT_BYTES` free after ``size`` more bytes
    of a derived file (vectors, a session's snapshot): derived files never take the disk's last
    room, which a journal may need. False when the room cannot be told."""
    free = free_bytes(folder)
    return free is not None and free >= size + ROOM_KEPT_BYTES


def rebuild_needs_bytes(data: DataDir, *, more_than: int | None = None) -> int:
    """Free bytes a rebuild of the index from ``data``'s document journals asks for: its peak (the
    index and its log) with :data:`ROOM_KEPT_BYTES` still free. With ``more_than``, the journals are
    counted only until what they ask for passes it (then that much is returned, less than the whole):
    a shelved index asks whether there is room at every index flush and search, and the disk that
    shelved it is seldom near room for it. Raises OSError or StoreError."""
    held = 0
    if more_than is None or _asked(held) <= more_than:  # else not even the folder is listed
        for size in _journal_sizes(data.docs):
            held += size
            if more_than is not None and _asked(held) > more_than:
                break
    return _asked(held)


def _journal_sizes(docs: Path) -> Iterator[int]:
    """The size of each generation file of :func:`~.layout.document_folders`, the journals the rebuild
    (:func:`~.index_flush.reindex_documents`) indexes, through ``os.scandir`` and its entries' ``stat`` (504
    against 811 ms over 20,000 folders, /tmp/cost27/walk_cost.py). A folder it may not list is skipped; a
    journal or a folder gone since it was listed, 0 bytes."""
    try:
        folders = document_folders(docs)
    except (FileNotFoundError, PermissionError):
        return
    for folder in folders:
        try:
            journals = generation_files(folder.path)
        except (FileNotFoundError, PermissionError):
            continue
        for journal in journals:
            try:
                yield journal.stat().st_size
            except FileNotFoundError:
                yield 0
            except OSError as exc:
                raise store_error("stat", Path(journal.path), exc) from exc


def _asked(held: int) -> int:
    """What a rebuild from ``held`` bytes of journals asks for (:func:`rebuild_needs_bytes`)."""
    return REBUILD_FACTOR * held + min(REBUILD_LOG_FACTOR * held, REBUILD_LOG_BYTES) + ROOM_KEPT_BYTES


def room_to_rebuild(data: DataDir) -> bool:
    """Whether the disk has room to rebuild the index and still keep :data:`ROOM_KEPT_BYTES` free. The
    journals are counted only as far as the free room (:func:`rebuild_needs_bytes`' ``more_than``): on a
    disk without it, none or a few, not every one (20,000 stats a try at 20,000 documents)."""
    try:
        room = os.statvfs(data.root)
        free = room.f_bavail * room.f_frsize
        needed = rebuild_needs_bytes(data, more_than=free)
    except (OSError, StoreError) as exc:
        log.warning("cannot tell the room on the disk of %s (%s): the search index stays set aside", data.root, exc)
        return False
    return free >= needed
