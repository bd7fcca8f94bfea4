"""The index side of the store writer: indexing what batches appended, deferring, healing, rebuilding.

:func:`flush_index` indexes the appends the writer acknowledged and forgets the rows of the
journals it removed, in one transaction (the writer's indexer runs it in a thread of its
own, beside the next batches: :mod:`.writer`). An index whose write lock another process
holds is deferred (``IndexHealth.lagging``, ``unforgotten``) and caught up later; a
damaged one is healed (reopened or recreated, and every document journal re-indexed); one
that finds no room on the disk is shelved and rebuilt once there is room (:mod:`.room`).

All of it blocks; ``OSError`` and ``sqlite3.Error`` were already translated to
``StoreError`` below.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import StoreError
from .index import Forget, IndexDamagedError, IndexFullError, SearchIndex
from .layout import document_folders, generation_files
from .reading import journal_size, store_error
from .results import AppendResult
from .room import room_to_rebuild, shelve, shelve_all_the_same
from .rows import IndexRow

if TYPE_CHECKING:
    import os

    from .layout import DataDir
    from .writer_state import IndexHealth

__all__ = [
    "BUSY_BACKOFF_S",
    "IndexWork",
    "defer",
    "flush_index",
    "heal_index",
    "open_index",
    "rebuild",
    "reindex_documents",
    "retry_lagging",
]

log = logging.getLogger("ctxtrio.store")

#: After the index's write lock was found busy, batches defer their index updates for
#: this long instead of each waiting ``WRITE_BUSY_S`` for it again.
BUSY_BACKOFF_S = 1.0

#: What an acknowledged append leaves for the index: journal name, path, result, rows by
#: offset; or, for a journal removed or moved, the forgetting of its rows.
IndexWork = tuple[str, Path, AppendResult, dict[int, list[IndexRow]]] | Forget


def flush_index(data: DataDir, index: SearchIndex, pending: list[IndexWork], health: IndexHealth) -> None:
    """Index what batches appended and forget what they removed, and deferred journals too;
    defer again if the lock is busy. A shelved index is rebuilt instead, if there is room
    (the rebuild indexes every journal); one that finds no room is shelved."""
    if not pending:
        return
    with health.writing:
        if health.shelved:
            rebuild(data, index, health)
            return
        if health.lagging and health.clock.now() < health.retry_at:
            # Still backing off from a busy lock: the journals are durable, fill the gap later.
            defer(pending, health)
            return
        try:
            index.index_batch(
                [
                    work if isinstance(work, Forget) else (work[0], work[1], work[2].records, work[2].end, work[3])
                    for work in pending
                ]
            )
            _catch_up_lagging(data, index, health)
        except IndexDamagedError as exc:
            log.warning("%s: healing it", exc)
            heal_index(data, index, health, corrupt=exc.corrupt)
        except IndexFullError as exc:
            # Waiting does not free room, and the rolled-back update left the write-ahead log at the
            # size it grew to: give the index's room to the journals, and rebuild it if there is room.
            shelve(index, health, str(exc))
            rebuild(data, index, health)
        except StoreError as exc:
            # The journals are durable; the watermark did not move, so a later batch or the
            # next search of these journals re-indexes the gap.
            defer(pending, health)
            health.retry_at = health.clock.now() + BUSY_BACKOFF_S
            log.warning("index update deferred for %d journal(s): %s", len(health.lagging), exc)


def defer(pending: list[IndexWork], health: IndexHealth) -> None:
    """Leave index work for later: appends are caught up from their journals, removals forgotten."""
    if health.shelved:
        return  # the rebuild indexes the journals there are then, and none that was removed
    for work in pending:
        if isinstance(work, Forget):
            health.lagging.pop(work.journal, None)
            health.unforgotten.add(work.journal)
        else:
            health.lagging[work[0]] = work[1]


def rebuild(data: DataDir, index: SearchIndex, health: IndexHealth) -> None:
    """Rebuild a shelved index from the document journals if the disk has room for it; if
    the rebuild finds no room after all, the index is shelved again. The caller holds
    ``health.writing``."""
    if not room_to_rebuild(data):
        return
    try:
        index.open()  # a new file: shelving deleted the old one
        if index.unavailable:  # (not damage: open() said why and logged it)
            raise StoreError(index.unavailable)
        reindex_documents(data, index)
    except StoreError as exc:
        shelve(index, health, str(exc))
        return
    health.shelved = False
    health.heals += 1
    log.warning("search index %s rebuilt from the journals: the disk has room again", data.index_path)


def _catch_up_lagging(data: DataDir, index: SearchIndex, health: IndexHealth) -> None:
    """Forget the rows of removed journals left over, and fill the index gaps of deferred
    journals (raises StoreError if the lock is still busy)."""
    for name in list(health.unforgotten):
        _forget_rows(data, index, health, name)
        health.unforgotten.discard(name)
    for name, path in list(health.lagging.items()):
        index.catch_up(name, path, journal_size(path))
        health.lagging.pop(name, None)


def open_index(data: DataDir, index: SearchIndex, health: IndexHealth) -> None:
    """Open the index at startup and re-index the journals if it is new; one the disk has no room
    for is shelved, and rebuilt once there is room, as if a journal write had taken its room."""
    with health.writing:
        try:
            if index.open():
                reindex_documents(data, index)
        except IndexFullError as exc:
            shelve_all_the_same(index, health, str(exc))


def heal_index(data: DataDir, index: SearchIndex, health: IndexHealth, *, corrupt: bool) -> None:
    """Reopen (or recreate, if ``corrupt``) the index and re-index every document journal."""
    try:
        index.heal(corrupt=corrupt)
        if index.unavailable:  # another process holds its lock still (a restart is needed for other causes)
            raise index.refusal()
        health.heals += 1
        reindex_documents(data, index)
    except IndexFullError as exc:
        shelve(index, health, str(exc))  # (rebuilt once there is room)
        return
    health.lagging.clear()
    health.unforgotten.clear()  # only the journals still there were indexed again


def reindex_documents(data: DataDir, index: SearchIndex) -> None:
    """Index every document journal up to its end (only the gaps: watermarks are kept): the generation files
    of :func:`~.layout.document_folders`, by name. A folder gone, or one it may not list, is passed over."""
    try:
        folders = sorted(document_folders(data.docs), key=_name)
    except OSError as exc:
        raise store_error("list", data.docs, exc) from exc
    added = 0
    for folder in folders:
        try:
            files = sorted(generation_files(folder.path), key=_name)
        except (FileNotFoundError, PermissionError):
            continue  # (as Path.glob, which listed them before, passed them over)
        except OSError as exc:
            raise store_error("list", Path(folder.path), exc) from exc
        for file in files:
            path = Path(file.path)
            added += index.catch_up(data.journal_name(path), path, journal_size(path))
    if added:  # nothing to say on a store whose index was up to date (or empty)
        log.info("search index: %d rows re-indexed from the document journals", added)


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _forget_rows(data: DataDir, index: SearchIndex, health: IndexHealth, name: str) -> None:
    """Drop a removed journal's rows from the index (and its lag); rebuild the index if it cannot."""
    health.lagging.pop(name, None)
    try:
        index.forget(name)
    except (IndexDamagedError, IndexFullError):
        raise  # healed, or shelved for room, by the caller
    except StoreError as exc:
        # The index is derived: drop it and rebuild it from the journals left.
        log.warning("search index could not forget %s (%s); rebuilding it from the journals", name, exc)
        heal_index(data, index, health, corrupt=True)


def retry_lagging(data: DataDir, index: SearchIndex, health: IndexHealth) -> None:
    """Catch the lagging journals up (still busy: try again after :data:`BUSY_BACKOFF_S`), or
    rebuild a shelved index if there is room now (a search asks: it reports what is still missing)."""
    with health.writing:
        if health.shelved:
            rebuild(data, index, health)
            return
        try:
            _catch_up_lagging(data, index, health)
        except IndexDamagedError:
            raise
        except IndexFullError as exc:
            shelve(index, health, str(exc))
            rebuild(data, index, health)
        except StoreError as exc:  # still busy: the search that asked reports it
            health.retry_at = health.clock.now() + BUSY_BACKOFF_S
            log.warning("deferred index updates still blocked: %s", exc)
