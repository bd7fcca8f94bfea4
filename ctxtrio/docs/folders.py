"""The document folders on disk, for worker threads: the startup sweep and its helpers.

``docs/<doc>/<gen>.jsonl`` holds one ingest generation. At startup
:func:`sweep_folders` sorts every generation file: current ones the index lags behind
are caught up, ones a readable catalog record proves obsolete are removed (set aside
instead when the generation that replaced them does not read whole), and ones no
readable record commits are set aside in ``lost-and-found/`` once older than
:data:`ORPHAN_AGE_S` (never deleted; a younger one may still be being written).
:class:`~.repository.Repository` acts on what it finds through the store's handle.

Everything here blocks; ``OSError`` becomes ``StoreError`` where a caller must know.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import StoreError
from ..store.index import IndexDamagedError
from ..store.layout import document_folders, generation_files
from .catalog import commit_key, generation_end

if TYPE_CHECKING:
    from ..store.handle import StoreHandle
    from ..store.layout import DataDir
    from ..store.records import Record
    from .catalog import CatalogState

__all__ = [
    "ORPHAN_AGE_S",
    "Sweep",
    "generation_landed",
    "landed_or_own",
    "make_doc_dir",
    "probe_writable",
    "remove_empty_dirs",
    "sweep_folders",
]

log = logging.getLogger("ctxtrio.docs")

#: A never-committed generation file younger than this may still be being written.
ORPHAN_AGE_S = 3600.0


@dataclass(frozen=True, slots=True)
class Sweep:
    """What the startup sweep found: files to remove, to set aside, and to index."""

    remove: list[Path]
    catch_up: list[Path]
    #: Generation files no readable catalog record accounts for.
    lost: list[Path]
    #: The index was found damaged while reading watermarks.
    damaged: IndexDamagedError | None = None
    #: Obsolete generation files kept, not removed: the current generation that replaced
    #: them does not read whole (see :func:`sweep_folders`).
    kept: list[Path] = field(default_factory=list)
    #: Current generation files the index could not be asked about (its write lock held by another process
    #: at open, a failing file system): the next search of them catches them up if they lag.
    unchecked: list[Path] = field(default_factory=list)


def make_doc_dir(directory: Path) -> None:
    """Create ``docs/<doc>/`` and make its entry durable (blocking)."""
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(directory.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StoreError(f"cannot create {directory}: {exc.strerror or exc}") from exc


def _index_lags(data: DataDir, store: StoreHandle, path: Path, size: int) -> bool | None:
    """Whether the index holds less of ``path`` than its ``size`` bytes; None if it cannot be asked
    (IndexDamagedError: heal it). Not asked of an index set aside for lack of room: its rebuild indexes
    every journal."""
    if store.health.shelved:
        return False
    try:
        return store.blocking.watermark(data.journal_name(path)) < size
    except IndexDamagedError:
        raise
    except StoreError:  # the index cannot be opened: said once for the sweep (Repository._open)
        return None


def sweep_folders(data: DataDir, store: StoreHandle, state: CatalogState, *, now: float) -> Sweep:
    """Find obsolete generation files, and current ones the index lags behind (blocking)."""
    remove: list[Path] = []
    catch_up: list[Path] = []
    lost: list[Path] = []
    kept: list[Path] = []
    unchecked: list[Path] = []
    damaged: IndexDamagedError | None = None
    try:
        folders = document_folders(data.docs)
    except OSError as exc:
        raise StoreError(f"cannot list {data.docs}: {exc.strerror or exc}") from exc
    for folder in folders:
        current = state.docs.get(folder.name)
        try:
            files = generation_files(folder.path)
        except OSError as exc:
            log.warning("cannot list %s: %s", folder.path, exc)
            continue
        whole: bool | None = None  # whether the current generation reads whole, once asked
        for file in files:
            gen = file.name.removesuffix(".jsonl")
            path = Path(file.path)
            if current is not None and current.gen == gen:
                try:
                    lags = damaged is not None or _index_lags(data, store, path, file.stat().st_size)
                    if lags is None:
                        unchecked.append(path)
                    elif lags:
                        catch_up.append(path)
                except IndexDamagedError as exc:
                    damaged = exc  # the writer heals it; every current generation is caught up
                    catch_up.append(path)
            elif (folder.name, gen) in state.committed:  # a readable record proves it obsolete
                if current is not None and whole is None:
                    whole = _reads_whole(store, Path(folder.path) / f"{current.gen}.jsonl", current.info.chunks)
                (remove if current is None or whole else kept).append(path)
            elif now - file.stat().st_mtime > ORPHAN_AGE_S:
                lost.append(path)  # no readable record at all: set aside, never delete
    return Sweep(remove, catch_up, lost, damaged, kept, unchecked)


def _reads_whole(store: StoreHandle, path: Path, chunks: int) -> bool:
    """Whether a current generation file holds every chunk its commit counts, no line malformed.

    An obsolete generation is still on disk after a crash in the round that replaced it, and
    a commit is fsynced with its chunks in one round: :func:`generation_landed` checked only
    where the file ends, and a filesystem that orders neither may keep a file's end and lose
    a block inside it. Then the obsolete file is the last whole version; it is kept.
    """
    try:
        result = store.blocking.read(path)
    except StoreError:
        return False
    held = sum(record.data.get("kind") == "chunk" for record in result.records)
    return not result.quarantined and not result.torn_tail_bytes and held >= chunks


def generation_landed(docs: Path, record: Record) -> bool:
    """Whether the generation file a commit record names reaches the end it names, a whole
    line ending there (blocking; see :mod:`.catalog`). A crash may have kept the commit and
    lost the file's tail, its folder entry or all of it, or left zeros in its place."""
    doc, gen, end = record.get("doc"), record.get("gen"), generation_end(record)
    if not isinstance(doc, str) or not isinstance(gen, str) or end is None:
        return True
    if end <= 0:
        return end == 0
    try:
        fd = os.open(docs / doc / f"{gen}.jsonl", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return os.pread(fd, 1, end - 1) == b"\n"
    except OSError:
        return False
    finally:
        os.close(fd)


def landed_or_own(own: set[tuple[str, str]], docs: Path, record: Record) -> bool:
    """:func:`generation_landed`, or a commit of this process's (``own``): the writer wrote its chunks
    before it, so its file is not read."""
    return commit_key(record) in own or generation_landed(docs, record)


def probe_writable(directory: Path) -> None:
    """StoreError unless a file can be created and removed in ``directory`` (blocking)."""
    probe = directory / f".forget-probe-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except FileNotFoundError:
        return  # no folder: nothing to remove
    except OSError as exc:
        raise StoreError(
            f"cannot forget: {directory} is not writable ({exc.strerror or exc}); nothing was changed"
        ) from exc


def remove_empty_dirs(docs: Path, state: CatalogState, *, now: float) -> None:
    """Remove old empty folders of documents that no longer exist (blocking).

    Young ones are left alone: an ingest may have just created its folder.
    """
    try:
        folders = document_folders(docs)
    except OSError:
        return
    for folder in folders:
        if folder.name in state.docs:
            continue
        try:
            if now - folder.stat().st_mtime > ORPHAN_AGE_S:
                os.rmdir(folder.path)
        except OSError:
            pass  # not empty, or already gone
