"""Whole sessions: deleted and restored as a unit (pure helpers of the session service).

A deleted session is one whose journal's last ``session`` record says ``deleted: true``
(see :mod:`.state`). It keeps every record, so restoring it gives back exactly what it
held; ``prune`` is what removes it for good.
"""

from __future__ import annotations

from .._errors import InputError
from .model import SessionInfo
from .state import SessionState

__all__ = ["refuse_deleted", "session_info"]


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
