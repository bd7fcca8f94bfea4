"""Listing sessions, in one place: :class:`ListingMethods` of the session service, pages of the data dir, not replays of it.

A listing stats every journal (``sessions/*.jsonl``) and orders them by modification
time, newest first: the last append is the last activity, so this is "latest first"
without opening a single file. Only the sessions of the page asked for are described:
those held in memory from there (after a refresh), the others from their summary files
(:mod:`~ctxtrio.memory.sessions.summary`) when fresh, else by loading the session from
its journal once (a light replay, which rewrites the summary). Summaries of evicted
sessions waiting to be written are written first, so a session this process just worked
on is never replayed for a listing. The page is packed into a token budget and says how
to get the next one.

:func:`scan_journals` and :func:`describe` block (worker threads); :func:`pack_page` is pure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import trio

from ..._errors import StoreError
from ..._limits import LIST_LIMIT, LIST_OFFSET, check_budget, check_range
from ...store.ids import ID_PATTERN
from ...text.plural import first_to_last, plural
from ..model import JournalCheck, SessionInfo, SessionPage
from ..render import session_line
from ..sessions.repository import journal_stat, replay, scan_session_ids
from ..sessions.store import same_state
from ..sessions.summary import read_summary, summarize_state, write_summaries, write_summary
from ..state.columns import SessionState
from .lifecycle import session_info
from .prune import replay_records

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...store.handle import StoreHandle
    from ...store.layout import DataDir
    from ...text.tokens import TokenModel
    from ..sessions.store import SessionStore

__all__ = ["MAX_PAGE", "JournalFile", "ListingMethods", "describe", "pack_page", "scan_journals"]

#: Most sessions one page describes, whatever the budget.
MAX_PAGE: Final = 50


@dataclass(frozen=True, slots=True)
class JournalFile:
    """A session journal found in the data dir, and when it last changed."""

    session_id: str
    mtime_ns: int


def scan_journals(data: DataDir) -> list[JournalFile]:
    """Every session journal, most recently written first (ties by id; blocking)."""
    found: list[JournalFile] = []
    derived: list[tuple[str, Path]] = []
    try:
        with os.scandir(data.sessions) as entries:
            for entry in entries:
                session_id = entry.name.removesuffix(".jsonl")
                if session_id == entry.name:
                    for suffix in _DERIVED:
                        if entry.name.endswith(suffix):
                            derived.append((entry.name.removesuffix(suffix), Path(entry.path)))
                    continue
                if not ID_PATTERN.fullmatch(session_id):
                    continue
                try:
                    found.append(JournalFile(session_id, entry.stat().st_mtime_ns))
                except FileNotFoundError:  # removed meanwhile
                    continue
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"cannot list {data.sessions}: {exc.strerror or exc}") from exc
    found.sort(key=lambda journal: (-journal.mtime_ns, journal.session_id))
    _remove_orphans(derived, {journal.session_id for journal in found})
    return found


#: Suffixes of the derived files kept beside a journal.
_DERIVED: Final = (".summary.json", ".snapshot", ".slices")


def _remove_orphans(derived: list[tuple[str, Path]], journals: set[str]) -> None:
    """Derived files whose journal is gone (a pruned session) are removed; they are only caches."""
    for session_id, path in derived:
        if session_id not in journals and not path.with_name(session_id + ".jsonl").exists():
            try:
                path.unlink()
            except OSError:
                pass


def describe(store: StoreHandle, session_ids: Sequence[str], model: TokenModel) -> list[SessionInfo | None]:
    """The listing line of each session (None: no such session), from fresh summaries when possible.

    A session whose summary is missing or stale is replayed from its journal into a
    throwaway light state (statuses and counts only: no texts, tokens or search terms;
    nothing kept), and that summary is written for the next listing. A light summary
    carries no token model, so status never answers from it.
    """
    infos: list[SessionInfo | None] = []
    for session_id in session_ids:
        path = store.data.session_journal(session_id)
        ino, size = journal_stat(path)
        summary = read_summary(path, session_id) if size else None
        if summary is not None and summary.fresh(ino, size):
            infos.append(summary.info())
            continue
        state = SessionState(session_id, model, light=True)
        replay(path, state, store)
        if not state.exists:
            infos.append(None)
            continue
        summary = summarize_state(state, ino)
        write_summary(path, summary)
        infos.append(summary.info())
    return infos


def pack_page(
    items: Sequence[tuple[int, SessionInfo]],
    *,
    total: int,
    offset: int,
    window_end: int,
    budget_tokens: int,
    model: TokenModel,
) -> SessionPage:
    """As many of ``items`` (position in the listing, session) as fit, and how to get the rest.

    ``items`` describe the journals from ``offset`` to ``window_end`` (journals that hold
    no session are left out). The page always shows at least one session, and its text
    (lines plus the closing line) stays within ``budget_tokens`` otherwise.
    """
    lines: list[str] = []
    shown: list[SessionInfo] = []
    used = 0
    reserve = model.estimate(_trailer(total, total, total, total))
    end = window_end
    for position, info in items:
        line = session_line(info)
        cost = model.estimate(line)
        if shown and used + cost + reserve > budget_tokens:
            end = position
            break
        lines.append(line)
        shown.append(info)
        used += cost
    next_offset = end if end < total else None
    if offset >= total > 0:  # (as a range it read '6-5 of 2'; doc_list says the same of its from=)
        past = f"({plural(total, 'session')}; offset={offset} is past the end: use {first_to_last('offset', total)})\n"
        return SessionPage((), total, offset, None, past)
    return SessionPage(
        tuple(shown), total, offset, next_offset, "".join(lines) + _trailer(offset, end, total, next_offset)
    )


def _trailer(offset: int, end: int, total: int, next_offset: int | None) -> str:
    if next_offset is None:
        return (
            f"({plural(total, 'session')})\n" if offset == 0 else f"(sessions {offset + 1}-{end} of {total}; no more)\n"
        )
    return f"(sessions {offset + 1}-{end} of {total}; next page: offset={next_offset})\n"


class ListingMethods:
    """Listing sessions: methods of :class:`~ctxtrio.memory.service.SessionService`."""

    _sessions: SessionStore

    async def list_sessions(
        self, *, include_deleted: bool = False, offset: int = 0, limit: int | None = None
    ) -> list[SessionInfo]:
        """Sessions in the data dir, most recent activity first: all, or ``limit`` journals from ``offset``.

        Deleted sessions only if asked. Sessions are described by their summary files;
        none is kept in memory for this.
        """
        check_range("offset", offset, LIST_OFFSET)
        check_range("limit", limit, LIST_LIMIT)
        listed = await trio.to_thread.run_sync(scan_journals, self._sessions.handle.data)
        window = listed[offset:] if limit is None else listed[offset : offset + limit]
        infos = await self._describe_sessions([journal.session_id for journal in window])
        return [info for info in infos if info is not None and (include_deleted or info.deleted_at is None)]

    async def page_sessions(self, *, offset: int = 0, budget_tokens: int | None = None) -> SessionPage:
        """One page of the session list from ``offset``, packed into the budget (see :class:`SessionPage`)."""
        check_range("offset", offset, LIST_OFFSET)
        budget = check_budget(budget_tokens, self._sessions.live.budget_tokens)
        listed = await trio.to_thread.run_sync(scan_journals, self._sessions.handle.data)
        window = listed[offset : offset + MAX_PAGE]
        infos = await self._describe_sessions([journal.session_id for journal in window])
        items = [(offset + n, info) for n, info in enumerate(infos) if info is not None and info.deleted_at is None]
        return pack_page(
            items,
            total=len(listed),
            offset=offset,
            window_end=offset + len(window),
            budget_tokens=budget,
            model=self._sessions.live.tokens.current,
        )

    async def check_journals(self) -> JournalCheck:
        """Read every session journal as stored, deleted sessions too, and count what it holds and what is damaged.

        Nothing is loaded into memory or written (``ctxtrio doctor``'s check).
        """
        handle = self._sessions.handle
        ids = await trio.to_thread.run_sync(scan_session_ids, handle.data)
        torn = malformed = records = deleted = 0
        for session_id in ids:
            read = await handle.read(handle.data.session_journal(session_id))
            torn += bool(read.torn_tail_bytes)
            malformed += len(read.quarantined)
            records += len(read.records)
            deleted += replay_records(session_id, [r.data for r in read.records]).deleted_at is not None
        return JournalCheck(len(ids), deleted, records, torn, malformed)

    async def _describe_sessions(self, session_ids: list[str]) -> list[SessionInfo | None]:
        """Listing lines (None: no such session): from memory for sessions held there, else summary files."""
        registry = self._sessions.registry
        found: dict[str, SessionInfo | None] = {}
        for session_id in session_ids:
            if session_id in registry:
                with registry.use(session_id) as session:
                    async with session.lock:
                        state = await self._sessions.sync(session, same_state, must_exist=False)
                        found[session_id] = session_info(state) if state.exists else None
        rest = [session_id for session_id in session_ids if session_id not in found]
        pending = registry.take_summaries()
        if pending:
            await trio.to_thread.run_sync(write_summaries, pending)
        if rest:
            described = await trio.to_thread.run_sync(
                describe, self._sessions.handle, rest, self._sessions.live.tokens.current
            )
            found.update(zip(rest, described))
        return [found[session_id] for session_id in session_ids]
