"""The one store object of the sessions: which are held in memory, their journals, their derived files.

:class:`SessionStore` is what every part of :class:`~ctxtrio.memory.service.SessionService`
works through: the store's handle, the live settings, the registry of sessions held in
memory (:mod:`.registry`, each a :class:`~.repository.LoadedSession` kept in step with its
journal and snapshot by :mod:`.repository`, its summary file by :mod:`.summary`), and the
two steps every operation is made of.

* :meth:`SessionStore.sync` brings a session's state up to its journal (applying
  what other processes appended) and runs a function on it, in one worker thread.
* :meth:`SessionStore.append` writes records durably and absorbs them: our own
  append is applied from the store's result when nothing else was written in between,
  else through a sync (see :meth:`SessionStore.absorb`).

Every method that takes a ``LoadedSession`` expects its caller to hold ``session.lock``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import trio

from ..._errors import NotFoundError
from ...store.ids import new_id, other_case
from .registry import MAX_ENTRIES, MAX_SESSIONS, SessionRegistry
from .repository import LoadedSession, journal_stat, refresh, up_to_date
from .summary import write_summaries

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    from ..._live import Live
    from ...store.handle import StoreHandle
    from ...store.records import NewRecord, Record
    from ...store.results import AppendResult
    from ..state.columns import SessionState

__all__ = ["SessionStore", "same_state"]

T = TypeVar("T")


def same_state(state: SessionState) -> SessionState:
    """The state itself (a ``then`` for :meth:`SessionStore.sync` that only refreshes)."""
    return state


class SessionStore:
    """The store's handle, the live settings and the sessions held in memory, and how to keep them in step.

    At most ``max_sessions`` idle sessions, holding ``max_entries`` entries in all, stay
    in memory (see :mod:`.registry`).
    """

    def __init__(
        self, handle: StoreHandle, live: Live, *, max_sessions: int = MAX_SESSIONS, max_entries: int = MAX_ENTRIES
    ) -> None:
        self.handle = handle
        self.live = live
        self.registry = SessionRegistry(handle.data, max_sessions=max_sessions, max_entries=max_entries)

    def use(self, session_id: str) -> AbstractContextManager[LoadedSession]:
        """The session held in memory for the length of one call (see :meth:`SessionRegistry.use`)."""
        return self.registry.use(session_id)

    async def sync(
        self,
        session: LoadedSession,
        then: Callable[[SessionState], T],
        *,
        must_exist: bool = True,
        deleted_ok: bool = False,
        cheap: bool = False,
    ) -> T:
        """Refresh the state from the journal and run ``then`` on it, in one worker thread.

        The caller holds ``session.lock``. Raises NotFoundError (naming
        context_list_sessions) when ``must_exist`` and the session has no journal, or
        is deleted (unless ``deleted_ok``). With ``cheap`` (``then`` is O(1), as a status
        is), a journal unchanged since the state was read is answered on the event loop:
        no worker thread, which under a storm of ingests waits for the GIL (context_status
        p99 ~100 ms queued for a thread and ~70 ms back, stress/ingest_storm.py).
        """
        model = self.live.tokens.current

        pending = self.registry.take_summaries()
        if cheap and not pending and up_to_date(session, model):
            state = session.state
            assert state is not None
            if state.exists and (deleted_ok or state.deleted_at is None):
                return then(state)

        def run() -> T:
            write_summaries(pending)
            refresh(session, model, self.handle)
            state = session.state
            assert state is not None
            if must_exist and not state.exists:
                stored = (path.stem for path in self.handle.data.sessions.glob("*.jsonl"))  # only when refused
                raise NotFoundError(
                    f"no session {session.session_id!r}{other_case(session.session_id, stored)}", hint="list_sessions"
                )
            if must_exist and not deleted_ok and state.deleted_at is not None:
                raise NotFoundError(
                    f"session {session.session_id!r} was deleted "
                    f"(its user can bring it back with: ctxtrio restore {session.session_id})",
                    hint="list_sessions",
                )
            return then(state)

        return await trio.to_thread.run_sync(run)

    async def write(self, session: LoadedSession, records: list[NewRecord]) -> AppendResult:
        """Append durably (the store does not index session entries; see :mod:`.service`)."""
        return await self.handle.append(session.path, records)

    async def append(self, session: LoadedSession, records: list[NewRecord]) -> SessionState:
        """Append while holding ``session.lock``; apply the result and return the state."""
        return await self.absorb(session, await self.write(session, records))

    async def absorb(
        self, session: LoadedSession, result: AppendResult, known_terms: dict[str, list[str]] | None = None
    ) -> SessionState:
        """Apply our own append (the caller holds ``session.lock``).

        Directly when the state ends where the append began; not at all when a refresh
        already read it; otherwise through a refresh, which also reads whatever other
        processes appended in between (see ``AppendResult.to_absorb``, which documents
        also absorb by).
        """
        state = session.state
        assert state is not None
        if result.file_id is not None and result.file_id != session.file_id:
            if session.file_id is not None or state.applied_offset:
                # Written to another file than the state was read from (a prune replaced
                # the journal meanwhile): offsets of the two do not compare.
                return await self.sync(session, same_state, must_exist=False)
            session.file_id = result.file_id  # the journal's first write
        own = result.to_absorb(state.applied_offset)
        if own is None or (own and state.model is not self.live.tokens.current):
            return await self.sync(session, same_state, must_exist=False)
        if own:
            state.apply(own, result.end, known_terms=known_terms)
        return state

    async def records(self, session: LoadedSession) -> list[Record]:
        """Every record of the session's journal as stored (the caller holds ``session.lock``)."""
        return [record.data for record in (await self.handle.read(session.path)).records]

    async def unused_id(self) -> str:
        """A new session id with no journal and no session in memory."""
        while True:
            session_id = new_id("s")
            path = self.handle.data.session_journal(session_id)
            ino, _ = await trio.to_thread.run_sync(journal_stat, path)
            if not ino and session_id not in self.registry:
                return session_id
