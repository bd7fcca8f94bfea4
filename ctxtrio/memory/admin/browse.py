"""Listing sessions for :class:`SessionService`: pages of the data dir, not replays of it.

Sessions held in memory answer from there (after a refresh); the others from their
summary files, rebuilt by a light replay where missing or stale (:mod:`~ctxtrio.memory.admin.listing`).
Summaries of evicted sessions waiting to be written are written first, so a session
this process just worked on is never replayed for a listing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from ..._limits import LIST_LIMIT, LIST_OFFSET, check_budget, check_range
from ..sessions.store import SessionJournals, same_state
from ..sessions.summary import write_summaries
from .lifecycle import session_info
from .listing import MAX_PAGE, describe, pack_page, scan_journals

if TYPE_CHECKING:
    from ..model import SessionInfo, SessionPage

__all__ = ["describe_sessions", "list_sessions", "page_sessions"]


async def list_sessions(
    journals: SessionJournals, *, include_deleted: bool, offset: int, limit: int | None
) -> list[SessionInfo]:
    """See :meth:`SessionService.list_sessions`."""
    check_range("offset", offset, LIST_OFFSET)
    check_range("limit", limit, LIST_LIMIT)
    listed = await trio.to_thread.run_sync(scan_journals, journals.store.data)
    window = listed[offset:] if limit is None else listed[offset : offset + limit]
    infos = await describe_sessions(journals, [journal.session_id for journal in window])
    return [info for info in infos if info is not None and (include_deleted or info.deleted_at is None)]


async def page_sessions(journals: SessionJournals, *, offset: int, budget_tokens: int | None) -> SessionPage:
    """See :meth:`SessionService.page_sessions`."""
    check_range("offset", offset, LIST_OFFSET)
    budget = check_budget(budget_tokens, journals.live.budget_tokens)
    listed = await trio.to_thread.run_sync(scan_journals, journals.store.data)
    window = listed[offset : offset + MAX_PAGE]
    infos = await describe_sessions(journals, [journal.session_id for journal in window])
    items = [(offset + n, info) for n, info in enumerate(infos) if info is not None and info.deleted_at is None]
    return pack_page(
        items,
        total=len(listed),
        offset=offset,
        window_end=offset + len(window),
        budget_tokens=budget,
        model=journals.live.tokens.current,
    )


async def describe_sessions(journals: SessionJournals, session_ids: list[str]) -> list[SessionInfo | None]:
    """Listing lines (None: no such session): from memory for sessions held there, else summary files."""
    registry = journals.registry
    found: dict[str, SessionInfo | None] = {}
    for session_id in session_ids:
        if session_id in registry:
            with registry.use(session_id) as session:
                async with session.lock:
                    state = await journals.sync(session, same_state, must_exist=False)
                    found[session_id] = session_info(state) if state.exists else None
    rest = [session_id for session_id in session_ids if session_id not in found]
    pending = registry.take_summaries()
    if pending:
        await trio.to_thread.run_sync(write_summaries, pending)
    if rest:
        described = await trio.to_thread.run_sync(describe, journals.store, rest, journals.live.tokens.current)
        found.update(zip(rest, described))
    return [found[session_id] for session_id in session_ids]
