"""Whole sessions deleted and restored as a unit: :class:`LifecycleMethods` of the session service, and its pure helpers.

A deleted session is one whose journal's last ``session`` record says ``deleted: true``
(see :mod:`~ctxtrio.memory.state.columns`). It keeps every record, so restoring it gives back exactly what it
held; ``prune`` is what removes it for good.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._errors import InputError
from ...store.records import NewRecord
from ..model import SessionInfo
from ..sessions.store import same_state

if TYPE_CHECKING:
    from ..sessions.store import SessionStore
    from ..state.columns import SessionState

__all__ = ["LifecycleMethods", "refuse_deleted", "session_info"]


def refuse_deleted(state: SessionState) -> None:
    """Raise InputError when ``state`` is a deleted session (it takes no new writes)."""
    if state.deleted_at is not None:
        raise InputError(
            f"session {state.session_id!r} was deleted; use another session_id "
            f"(its user can bring it back with: ctxtrio restore {state.session_id})"
        )


def session_info(state: SessionState) -> SessionInfo:
    """The list line of ``state``."""
    return SessionInfo(state.session_id, state.title, state.live_count, state.last_activity, state.deleted_at)


class LifecycleMethods:
    """Deleting and restoring whole sessions: methods of :class:`~ctxtrio.memory.service.SessionService`."""

    _sessions: SessionStore

    async def delete_session(self, session_id: str) -> SessionInfo:
        """Mark a whole session deleted: it leaves every list and read until restored.

        Nothing is removed: :meth:`restore_session` brings it back as it was, until
        ``prune`` removes the journal. Deleting a deleted session changes nothing.
        """
        return await self._set_deleted(session_id, True)

    async def restore_session(self, session_id: str) -> SessionInfo:
        """Undo :meth:`delete_session`; restoring a session that is not deleted changes nothing."""
        return await self._set_deleted(session_id, False)

    async def _set_deleted(self, session_id: str, deleted: bool) -> SessionInfo:
        with self._sessions.use(session_id) as session:
            async with session.lock:
                state = await self._sessions.sync(session, same_state, deleted_ok=True)
                if (state.deleted_at is not None) != deleted:
                    record = NewRecord("session", {"deleted": deleted}, id=session.session_id)
                    state = await self._sessions.append(session, [record])
                return session_info(state)
