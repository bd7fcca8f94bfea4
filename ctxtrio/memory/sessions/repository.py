"""A session held in memory, and the blocking work that keeps it in step with its journal.

Concurrency rule: every read or change of ``LoadedSession.state`` happens while the
session's ``lock`` is held, by the task holding it or by the one worker thread that
task is waiting on. So the blocking part of a read (stat the journal, read and apply
what other processes appended, then search, rank and pack) runs as one
``trio.to_thread.run_sync`` call, and no two refreshes ever apply a range twice.
A cancelled caller still waits for its worker thread, so the lock is never released
while a thread touches the state.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import trio

from ..._errors import StoreError
from ...store.ids import ID_PATTERN
from ..state.columns import SessionState
from ..state.snapshot import SNAPSHOT_AFTER_BYTES, load_snapshot, snapshot_due, write_snapshot
from .summary import summarize_state, write_summary

if TYPE_CHECKING:
    from pathlib import Path

    from ...store.handle import StoreHandle
    from ...store.layout import DataDir
    from ...text.tokens import TokenModel

__all__ = ["LoadedSession", "journal_stat", "refresh", "replay", "scan_session_ids", "up_to_date"]


class LoadedSession:
    """One session: its journal, its replayed state (None until first touched), its locks."""

    __slots__ = (
        "compact_lock",
        "file_id",
        "journal",
        "lock",
        "path",
        "session_id",
        "snapshot_offset",
        "state",
        "summary_offset",
        "users",
    )

    def __init__(self, session_id: str, data: DataDir) -> None:
        self.session_id = session_id
        self.path = data.session_journal(session_id)
        self.journal = data.journal_name(self.path)
        #: Held for every access to ``state``.
        self.lock = trio.Lock()
        #: Held across a whole compaction (including the summarizer call), so two
        #: compactions of one session in this process never summarize the same entries.
        self.compact_lock = trio.Lock()
        self.state: SessionState | None = None
        #: (device, inode) of the journal when it was last read: a prune replaces the file.
        self.file_id: tuple[int, int] | None = None
        #: Where the snapshot file loaded or last written ends (0: none).
        self.snapshot_offset = 0
        #: Where the summary file was last written (or found fresh): -1 when never.
        self.summary_offset = -1
        #: Calls using this session now (see :class:`~ctxtrio.memory.sessions.registry.SessionRegistry`).
        self.users = 0

    @property
    def idle(self) -> bool:
        return self.users == 0 and not self.lock.locked() and not self.compact_lock.locked()


def refresh(session: LoadedSession, model: TokenModel, store: StoreHandle) -> None:
    """Bring ``session.state`` up to the end of its journal (blocking; hold the lock).

    Loads the journal on first use (or again if the file was replaced: another inode,
    or it shrank), applies complete lines appended since, recounts tokens if ``model``
    changed, and rewrites the summary file when the state moved past it.
    """
    try:
        info = os.stat(session.path)
        size, file_id = info.st_size, (info.st_dev, info.st_ino)
    except FileNotFoundError:
        size, file_id = 0, None
    except OSError as exc:
        raise StoreError(f"cannot stat {session.path}: {exc.strerror or exc}") from exc
    state = session.state
    if state is None or size < state.applied_offset or (file_id != session.file_id and state.applied_offset):
        state = load_snapshot(session.path, session.session_id, model, file_id, size) if file_id and size else None
        session.snapshot_offset = state.applied_offset if state is not None else 0
        if state is None:
            state = SessionState(session.session_id, model)
        session.state = state
        session.summary_offset = -1
    session.file_id = file_id
    state.retokenize(model)
    if size > state.applied_offset:
        replay(session.path, state, store)
    if file_id is not None and snapshot_due(state.applied_offset, session.snapshot_offset, SNAPSHOT_AFTER_BYTES):
        if write_snapshot(session.path, state, file_id):
            session.snapshot_offset = state.applied_offset
    if state.exists and state.applied_offset != session.summary_offset:
        write_summary(session.path, summarize_state(state, file_id[1] if file_id else 0))
        session.summary_offset = state.applied_offset


def up_to_date(session: LoadedSession, model: TokenModel) -> bool:
    """Whether :func:`refresh` would change nothing and write nothing (one ``stat``; blocking, but a
    stat of a local file costs microseconds: it is asked on the event loop to spare a thread hop)."""
    state = session.state
    if state is None or state.model is not model:
        return False
    try:
        info = os.stat(session.path)
    except OSError:
        return False
    if info.st_size != state.applied_offset or (info.st_dev, info.st_ino) != session.file_id:
        return False
    if snapshot_due(state.applied_offset, session.snapshot_offset, SNAPSHOT_AFTER_BYTES):
        return False
    return not state.exists or state.applied_offset == session.summary_offset


#: Journal bytes parsed at once while replaying (bounds the memory a long replay holds).
_REPLAY_CHUNK_BYTES = 4 * 1024 * 1024


def replay(path: Path, state: SessionState, store: StoreHandle) -> None:
    """Apply the journal's complete lines from ``state.applied_offset``, a few MB at a time."""
    for read in store.blocking.read_blocks(path, state.applied_offset, block_bytes=_REPLAY_CHUNK_BYTES):
        state.apply(read.records, read.end)


def journal_stat(path: Path) -> tuple[int, int]:
    """The journal's (inode, size); (0, 0) when it does not exist (blocking)."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return 0, 0
    except OSError as exc:
        raise StoreError(f"cannot stat {path}: {exc.strerror or exc}") from exc
    return stat.st_ino, stat.st_size


def scan_session_ids(data: DataDir) -> list[str]:
    """Ids of the session journals in the data dir (blocking)."""
    try:
        names = os.listdir(data.sessions)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"cannot list {data.sessions}: {exc.strerror or exc}") from exc
    ids = (name.removesuffix(".jsonl") for name in names if name.endswith(".jsonl"))
    return sorted(session_id for session_id in ids if ID_PATTERN.fullmatch(session_id))
