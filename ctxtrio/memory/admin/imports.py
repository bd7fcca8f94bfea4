"""Whole-session operations of :class:`SessionService` for people and scripts: import and prune.

They use the service's own plumbing, :class:`~ctxtrio.memory.sessions.store.SessionJournals` (per-session
locks, journal sync, durable appends), and live here only to keep ``service.py`` readable.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING, Literal

import trio

from ..._errors import InputError
from ...store.ids import validate_id
from ...store.records import NewRecord, Record
from ...store.results import JournalExistsError
from ..sessions.repository import scan_session_ids
from ..sessions.store import SessionJournals, same_state
from .archive import ImportResult, candidate_ids, check_records, content_key, records_key, remap
from .lifecycle import prune_journal
from .prune import SessionPrune, plan_session

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["import_session", "prune"]

IdsKept = Literal["preserved", "remapped"]


async def import_session(journals: SessionJournals, session_id: str, records: Sequence[Record]) -> ImportResult:
    """Store exported records as a session: under ``session_id`` if it is free, else ``-2``...

    Idempotent: where the same content is already stored (deleted or not: a deleted
    one is restored), nothing is written. A session is written whole or not at all
    (:meth:`~ctxtrio.store.handle.StoreHandle.install`), under its lock, and never onto
    a journal that holds records, even one another process created meanwhile: that id
    is passed over and the result says so. See :mod:`.archive`.
    """
    validate_id(session_id, "session_id")
    await trio.to_thread.run_sync(check_records, session_id, records)
    key, deleted = await trio.to_thread.run_sync(records_key, session_id, records)
    skipped: list[str] = []
    for candidate in candidate_ids(session_id):
        with journals.registry.use(candidate) as session:
            async with session.lock:
                while True:
                    state = await journals.sync(session, same_state, must_exist=False)
                    if state.exists:
                        break
                    batch, changed = remap(records, candidate)
                    try:
                        result = await journals.store.install(session.path, batch)
                    except JournalExistsError:
                        continue  # another process created it meanwhile: look at what it holds
                    await journals.absorb(session, result)
                    kept: IdsKept = "preserved" if candidate == session_id and not changed else "remapped"
                    return ImportResult(session_id, candidate, "imported", len(batch), kept, changed, tuple(skipped))
                if content_key(state) != key:
                    skipped.append(f"{candidate}: holds other content, left as it was")
                    continue
                same: IdsKept = "preserved" if candidate == session_id else "remapped"
                if state.deleted_at is not None and not deleted:
                    await journals.append(session, [NewRecord("session", {"deleted": False}, id=candidate)])
                    return ImportResult(session_id, candidate, "restored", 0, same, 0, tuple(skipped))
                return ImportResult(session_id, candidate, "unchanged", 0, same, 0, tuple(skipped))
    raise InputError(f"sessions {session_id!r} to {session_id}-99 all hold other content: import it under another id")


async def prune(
    journals: SessionJournals, older_than_s: float, *, idle: bool = False, dry_run: bool = False
) -> list[SessionPrune]:
    """Remove for good what was retired (or idle) longer than ``older_than_s`` ago.

    Whole sessions deleted before the cutoff (with ``idle`` also those last active
    before it), and elsewhere entries
    superseded or deleted before it (see :mod:`.prune`). ``dry_run`` only says what
    would go. Each journal is rewritten under its lock, re-planned there, so an append
    from another process in the meantime is never lost.
    """
    if not older_than_s >= 0:
        raise InputError(f"older_than_s must be >= 0, got {older_than_s}")
    cutoff = time.time() - older_than_s
    plans: list[SessionPrune] = []
    for session_id in await trio.to_thread.run_sync(scan_session_ids, journals.store.data):
        with journals.registry.use(session_id) as session:
            async with session.lock:
                records = await journals.records(session)
                plan = await trio.to_thread.run_sync(partial(plan_session, session_id, records, cutoff, idle=idle))
                if plan is None:
                    continue
                if not dry_run:
                    await journals.store.rewrite(
                        session.path, partial(prune_journal, session_id, cutoff=cutoff, idle=idle)
                    )
                    session.state = None
                plans.append(plan)
    return plans
