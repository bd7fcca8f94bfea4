"""Which sessions are held in memory: a bounded, least-recently-used set.

Memory stays bounded whatever the callers ask for:

* a call registers its session only while it runs (:meth:`SessionRegistry.use`); when
  it ends and the session has no journal (an unknown id, a typo, a made-up id), the
  entry is dropped, so unknown ids cost nothing once answered;
* idle sessions beyond ``max_sessions``, or beyond ``max_entries`` entries held in all,
  are evicted least recently used first. A session in use (a call inside ``use``, its
  lock held or awaited) is never evicted, so two :class:`LoadedSession` objects never
  exist for one id at once and its locks keep their meaning. An evicted session is
  replayed again (from its snapshot and journal) on its next use. Its summary, if the
  file is behind, is kept for the next worker thread to write, so a listing later
  need not replay it.

Pure bookkeeping on the event loop thread; nothing here blocks.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

from ...store.ids import validate_id
from .repository import LoadedSession
from .summary import SessionSummary, summarize_state

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from ...store.layout import DataDir

__all__ = ["MAX_ENTRIES", "MAX_SESSIONS", "SessionRegistry"]

#: Sessions kept in memory after their calls end.
MAX_SESSIONS: Final = 64
#: Entries (of any status) held across all idle sessions kept in memory.
MAX_ENTRIES: Final = 250_000
#: Summaries of evicted sessions waiting to be written.
MAX_PENDING_SUMMARIES: Final = 1000


class SessionRegistry:
    """The sessions in memory, least recently used first."""

    def __init__(self, data: DataDir, *, max_sessions: int = MAX_SESSIONS, max_entries: int = MAX_ENTRIES) -> None:
        self._data = data
        self._max_sessions = max_sessions
        self._max_entries = max_entries
        self._sessions: OrderedDict[str, LoadedSession] = OrderedDict()
        #: Summaries of sessions evicted since their last summary file was written, for
        #: the next worker thread to write (:meth:`take_summaries`); the oldest are dropped.
        self._summaries: OrderedDict[str, tuple[Path, SessionSummary]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: str) -> bool:
        return session_id in self._sessions

    def loaded(self) -> list[LoadedSession]:
        """The sessions held now, least recently used first."""
        return list(self._sessions.values())

    def entries(self) -> int:
        """Entries held in all sessions in memory."""
        return sum(len(session.state) for session in self._sessions.values() if session.state is not None)

    @contextmanager
    def use(self, session_id: str) -> Iterator[LoadedSession]:
        """The session ``session_id`` (validated), registered while the ``with`` block runs."""
        session = self._sessions.get(session_id)
        if session is None:
            validate_id(session_id, "session_id")
            session = self._sessions[session_id] = LoadedSession(session_id, self._data)
        else:
            self._sessions.move_to_end(session_id)
        session.users += 1
        try:
            yield session
        finally:
            session.users -= 1
            if session.idle and (session.state is None or not session.state.exists):
                self._drop(session)
            self._evict()

    def _drop(self, session: LoadedSession) -> None:
        if self._sessions.get(session.session_id) is session:
            del self._sessions[session.session_id]

    def _evict(self) -> None:
        """Drop idle sessions, least recently used first, until both bounds hold."""
        held = self.entries()
        for session in list(self._sessions.values()):
            if len(self._sessions) <= self._max_sessions and held <= self._max_entries:
                return
            if session.idle:
                held -= len(session.state) if session.state is not None else 0
                self._keep_summary(session)
                self._drop(session)

    def _keep_summary(self, session: LoadedSession) -> None:
        state = session.state
        if state is None or not state.exists or state.applied_offset == session.summary_offset:
            return
        file_id = session.file_id
        self._summaries[session.session_id] = (session.path, summarize_state(state, file_id[1] if file_id else 0))
        self._summaries.move_to_end(session.session_id)
        while len(self._summaries) > MAX_PENDING_SUMMARIES:
            self._summaries.popitem(last=False)

    def take_summaries(self) -> list[tuple[Path, SessionSummary]]:
        """Summaries of evicted sessions not yet written (each returned once)."""
        taken = list(self._summaries.values())
        self._summaries.clear()
        return taken
