"""Prune, in one place: :meth:`PruneMethods.prune` of the session service, and what it removes for good from one journal.

Everything but :meth:`PruneMethods.prune` is pure (no trio).

A session goes whole when it was deleted before the cutoff (or, only when asked for
with ``idle``, when it was last active before it). Otherwise
its retired entries go: superseded or deleted entries whose retirement (the summary
that folded them, the patch that deleted them) is older than the cutoff. Every record
about a removed entry goes with it (its ``entry`` line and the patches naming it), and
summaries forget that they folded it. A summary that still supersedes an entry which
stays is kept, so replaying what remains gives exactly the live entries there were.
The rewritten journal ends with one ``prune`` record naming what went, whose sequence
number follows the last one, so sequence numbers (and ids made of them) never repeat.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal

import trio

from ..._errors import InputError
from ...store.records import JSON, SCHEMA_VERSION, Record
from ...text.tokens import TokenModel
from ..sessions.repository import scan_session_ids
from ..state.base import ENTRY_ID_FIELDS, record_time, strings_of
from ..state.columns import SessionState

if TYPE_CHECKING:
    from ..sessions.store import SessionStore

__all__ = ["PruneMethods", "SessionPrune", "plan_session", "prune_journal", "prune_records", "replay_records"]


@dataclass(frozen=True, slots=True)
class SessionPrune:
    """What prune does (or, with ``dry_run``, would do) to one session."""

    session_id: str
    action: Literal["remove session", "remove entries"]
    reason: str
    #: Entries removed: all of them when the session goes, else the retired ones.
    entries: tuple[str, ...]


def replay_records(session_id: str, records: list[Record]) -> SessionState:
    """A session state replayed from raw records (cold token model: counts do not matter here)."""
    state = SessionState(session_id, TokenModel.cold())
    for record in records:
        state.apply_record(record)
    return state


def plan_session(session_id: str, records: list[Record], cutoff: float, *, idle: bool = False) -> SessionPrune | None:
    """What prune does to a session with these records; None when nothing is old enough."""
    state = replay_records(session_id, records)
    if not state.exists:
        return None
    every = tuple(item.id for item in state.order)
    if state.deleted_at is not None and state.deleted_at <= cutoff:
        return SessionPrune(session_id, "remove session", "deleted before the cutoff", every)
    if idle and state.deleted_at is None and state.last_activity <= cutoff:
        return SessionPrune(session_id, "remove session", "no activity since before the cutoff", every)
    removed = _retired_before(state, records, cutoff)
    if not removed:
        return None
    ordered = tuple(item.id for item in state.order if item.id in removed)
    return SessionPrune(session_id, "remove entries", "superseded or deleted before the cutoff", ordered)


def prune_records(session_id: str, records: list[Record], cutoff: float, *, now: float) -> list[Record] | None:
    """The records the journal keeps after pruning retired entries; None when nothing goes.

    Checked before it is returned: replaying the result gives the same live entries
    (ids, texts, pins, tags, folding) as replaying the input, else nothing is changed.
    """
    before = replay_records(session_id, records)
    removed = _retired_before(before, records, cutoff)
    if not removed:
        return None
    kept: list[Record] = []
    for record in records:
        kind, record_id = record.get("kind"), str(record.get("id"))
        if kind in ("entry", "patch") and record_id in removed:
            continue
        folds = record.get("folds")
        if kind == "entry" and isinstance(folds, list) and any(f in removed for f in folds):
            record = {**record, "folds": [f for f in folds if f not in removed]}
        kept.append(record)
    last_seq = max((seq for r in records if isinstance(seq := r.get("seq"), int)), default=0)
    gone: list[JSON] = [item.id for item in before.order if item.id in removed]
    kept.append(
        {
            "v": SCHEMA_VERSION,
            "seq": last_seq + 1,
            "ts": round(now, 3),
            "kind": "prune",
            "id": f"p{last_seq + 1}",
            "entries": gone,
            "cutoff": round(cutoff, 3),
        }
    )
    after = replay_records(session_id, kept)
    if _live_view(after) != _live_view(before):
        return None  # a case this plan does not understand: leave the journal alone
    return kept


def _retired_before(state: SessionState, records: list[Record], cutoff: float) -> set[str]:
    retired_at: dict[str, float] = {}
    for record in records:
        # A time that is not one (NaN, infinite, negative, past year 9999, a string) counts as 0, as replay counts
        # it for an entry's time and a session's deletion: prune's own float() kept an entry deleted at NaN for good.
        when = record_time(record.get("ts")) or 0.0
        kind = record.get("kind")
        if kind == "patch":
            retired_at[str(record.get("id"))] = when
        elif kind == "entry":
            # A fold is retired when the summary that folds it is written; a summary a later compaction merged
            # when that compaction is written (dated by its own creation, it went before its window).
            for retired in (entry for field in ENTRY_ID_FIELDS for entry in strings_of(record.get(field))):
                retired_at[retired] = max(retired_at.get(retired, 0.0), when)
    removed = {item.id for item in state.order if not item.live and retired_at.get(item.id, item.ts) <= cutoff}
    # A summary that still supersedes an entry which stays must stay too.
    for item in state.order:
        if item.superseded_by is not None and item.id not in removed:
            removed.discard(item.superseded_by)
    return removed


def _live_view(state: SessionState) -> list[tuple[str, str, str, bool, tuple[str, ...]]]:
    return [(item.id, item.text, item.role, item.pinned, item.tags) for item in state.order if item.live]


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


class PruneMethods:
    """The prune method of :class:`~ctxtrio.memory.service.SessionService` (one of its parts)."""

    _sessions: SessionStore

    async def prune(self, older_than_s: float, *, idle: bool = False, dry_run: bool = False) -> list[SessionPrune]:
        """Remove for good what was retired (or idle) longer than ``older_than_s`` ago.

        Whole sessions deleted before the cutoff (with ``idle`` also those last active
        before it), and elsewhere entries
        superseded or deleted before it (see :func:`plan_session`). ``dry_run`` only says what
        would go. Each journal is rewritten under its lock, re-planned there, so an append
        from another process in the meantime is never lost.

        Cancelled, the sessions before are pruned (one at a time), those after untouched,
        and the one whose rewrite was queued to the store may still be rewritten (whole, or
        not at all). Nothing is half-pruned; pruning again does the rest.
        """
        if not older_than_s >= 0:
            raise InputError(f"older_than_s must be >= 0, got {older_than_s}")
        cutoff = time.time() - older_than_s
        plans: list[SessionPrune] = []
        for session_id in await trio.to_thread.run_sync(scan_session_ids, self._sessions.handle.data):
            with self._sessions.use(session_id) as session:
                async with session.lock:
                    records = await self._sessions.records(session)
                    plan = await trio.to_thread.run_sync(partial(plan_session, session_id, records, cutoff, idle=idle))
                    if plan is None:
                        continue
                    if not dry_run:
                        await self._sessions.handle.rewrite(
                            session.path, partial(prune_journal, session_id, cutoff=cutoff, idle=idle)
                        )
                        session.state = None
                    plans.append(plan)
        return plans
