"""Whole sessions: deleted and restored as a unit (pure helpers of the session service).

A deleted session is one whose journal's last ``session`` record says ``deleted: true``
(see :mod:`~ctxtrio.memory.state.columns`). It keeps every record, so restoring it gives back exactly what it
held; ``prune`` is what removes it for good.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..._errors import InputError
from ..model import SessionInfo
from .prune import plan_session, prune_records

if TYPE_CHECKING:
    from ...store.records import Record
    from ..state.columns import SessionState

__all__ = ["prune_journal", "refuse_deleted", "session_info"]


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


def prune_journal(session_id: str, records: list[Record], *, cutoff: float, idle: bool) -> list[Record] | None:
    """The journal's new records after prune (empty: remove it), or None to leave it.

    Runs under the journal's lock (``StoreHandle.rewrite``), so it plans again on what
    the journal holds now.
    """
    plan = plan_session(session_id, records, cutoff, idle=idle)
    if plan is None:
        return None
    if plan.action == "remove session":
        return []
    return prune_records(session_id, records, cutoff, now=time.time())
