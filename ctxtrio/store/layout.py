"""Where things live inside the data dir, and creating it safely.

::

    <data_dir>/                 mode 0700
      sessions/<session_id>.jsonl
      sessions/<session_id>.summary.json, .snapshot   derived (memory/summary.py, memory/snapshot.py)
      docs/catalog.jsonl        which generation of each document is current
      docs/<doc_id>/<gen>.jsonl one file per ingest generation
      docs/ingest.lock          empty; byte-range locks: one ingest of a file at a time (docs/source_lock.py)
      quarantine/               malformed journal lines, copied aside
      lost-and-found/docs/<doc>/<gen>.jsonl
                                generation files no readable catalog record accounts for
                                (set aside at startup, never deleted)
      index.sqlite3             derived search index (delete it to rebuild)
      vectors.sqlite3           derived chunk vectors of --embed-model (delete it to re-embed)
      session-vectors.sqlite3   derived session entry vectors of --embed-model (likewise)
      calibration.json          token calibration cache
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import StoreError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

__all__ = [
    "DataDir",
    "document_folders",
    "existing_data_dir",
    "generation_files",
    "not_a_directory",
    "not_writable",
    "prepare_data_dir",
    "private_file",
    "removed_for_good",
]


@dataclass(frozen=True, slots=True)
class DataDir:
    """Paths inside one data dir. Ids passed in must already be validated."""

    root: Path
    #: Made once, with the data dir: a property built them on each call, and an ingest asks for docs
    #: three times a document (~2 us each); sessions is asked for each session listed or watched.
    sessions: Path = field(init=False, repr=False, compare=False)
    docs: Path = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sessions", self.root / "sessions")
        object.__setattr__(self, "docs", self.root / "docs")

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine"

    @property
    def lost_found(self) -> Path:
        return self.root / "lost-and-found"

    @property
    def index_path(self) -> Path:
        return self.root / "index.sqlite3"

    @property
    def vectors_path(self) -> Path:
        return self.root / "vectors.sqlite3"

    @property
    def session_vectors_path(self) -> Path:
        return self.root / "session-vectors.sqlite3"

    @property
    def calibration_path(self) -> Path:
        return self.root / "calibration.json"

    def session_journal(self, session_id: str) -> Path:
        return self.sessions / f"{session_id}.jsonl"

    def journal_name(self, path: Path) -> str:
        """The journal's name as the index records it: its path relative to the root."""
        return path.relative_to(self.root).as_posix()


def prepare_data_dir(root: Path) -> DataDir:
    """Create the data dir (mode 0700) and its folders; prove it is writable.

    Raises StoreError with the path and the reason when it cannot be created or written.
    Blocking: call it before trio starts or through ``trio.to_thread``.
    """
    data = DataDir(root.expanduser().absolute())
    if (what := not_a_directory(data.root)) is not None:  # (mkdir said only 'File exists')
        raise StoreError(f"data dir {data.root} is not usable: it is {what}")
    try:
        data.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        for sub in (data.sessions, data.docs, data.quarantine):
            sub.mkdir(mode=0o700, exist_ok=True)
        probe = data.root / f".write-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise StoreError(f"data dir {data.root} is not usable: {exc.strerror or exc}") from exc
    return data


def existing_data_dir(root: Path) -> DataDir:
    """The data dir as it is, for a look that writes nothing (``doctor`` without ``--repair``).

    Creates nothing and proves nothing writable (no probe file), so a data dir on a read-only file
    system can still be looked at. Raises StoreError when ``root`` is not a directory.
    """
    data = DataDir(root.expanduser().absolute())
    if (what := not_a_directory(data.root)) is not None:
        raise StoreError(f"data dir {data.root} is not usable: it is {what}")
    if not data.root.is_dir():
        raise StoreError(f"data dir {data.root} does not exist")
    return data


def document_folders(docs: Path) -> list[os.DirEntry[str]]:
    """The folders of ``docs/``, one a document, as listed: directories only, and none reached through a
    symlink. ctxtrio makes each with ``mkdir`` (:func:`~ctxtrio.docs.folders.make_doc_dir`), so a link there
    is none of its documents, and nothing outside the data dir is read, indexed or counted through one: the
    startup sweep, the index's rebuild and the room asked for it all walk these. Blocking; raises OSError."""
    with os.scandir(docs) as listed:
        return [entry for entry in listed if entry.is_dir(follow_symlinks=False)]


def generation_files(folder: str) -> list[os.DirEntry[str]]:
    """The ``<gen>.jsonl`` files of one document folder (hidden names too), as listed. Blocking; raises
    OSError (the folder gone or unreadable since ``docs/`` was listed: each caller says what then)."""
    with os.scandir(folder) as listed:
        return [entry for entry in listed if entry.name.endswith(".jsonl")]


def not_a_directory(root: Path) -> str | None:
    """What is at ``root`` when it is there but no directory ("a file, not a directory"; a symlink to
    nothing), or None: a directory (or a symlink to one), nothing at all, or nothing this user may look at
    (creating the data dir then says why). Blocking."""
    try:
        info = os.stat(root)
    except FileNotFoundError:
        return "a symlink to nothing" if os.path.islink(root) else None
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return None
    return "a file, not a directory" if stat.S_ISREG(info.st_mode) else "not a directory"


def not_writable(root: Path) -> str | None:
    """Why this user cannot write to the existing directory ``root`` (a read-only file system, no write
    permission), or None. Asked of the file system, not probed: a look that writes nothing can ask it.
    Raises OSError when ``root`` cannot be looked at."""
    if os.statvfs(root).f_flag & os.ST_RDONLY:
        return "a read-only file system"
    if not os.access(root, os.W_OK | os.X_OK):
        return "no write permission for this user"
    return None


def private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless it exists: for a SQLite file, before SQLite opens it.

    SQLite creates a file 0644 (less the umask) and its ``-wal``/``-shm`` with the file's mode. Inside
    a data dir ctxtrio created (0700) nobody else can reach them, but a data dir that existed before,
    made 0755 by ``mkdir``, would let every local user read the index's copy of each document's text.
    Blocking. An OSError is left to the SQLite open that follows, which fails and says why."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600))
    except OSError:
        pass


def removed_for_good(current: Collection[str]) -> Callable[[str], bool]:
    """Whether a journal that is no longer current was removed for good: a document's generation
    files live in its own folder (``docs/<doc_id>/<gen>.jsonl``), so one whose folder holds no
    current journal was forgotten, where one whose folder does was replaced by a new generation."""
    folders = {journal.rpartition("/")[0] for journal in current}
    return lambda journal: journal.rpartition("/")[0] not in folders
