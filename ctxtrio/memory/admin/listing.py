"""Listing sessions without replaying them: the journals' mtimes order, summaries describe.

A listing stats every journal (``sessions/*.jsonl``) and orders them by modification
time, newest first: the last append is the last activity, so this is "latest first"
without opening a single file. Only the sessions of the page asked for are described,
each from its summary file (:mod:`~ctxtrio.memory.sessions.summary`) when that is fresh, else by loading the
session from its journal once (which rewrites the summary). The page is packed into a
token budget and says how to get the next one.

:func:`scan_journals` and :func:`describe` block (worker threads); :func:`pack_page` is pure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..._errors import StoreError
from ...store.ids import ID_PATTERN
from ..model import SessionInfo, SessionPage
from ..render import session_line
from ..sessions.repository import journal_stat, replay
from ..sessions.summary import read_summary, summarize_state, write_summary
from ..state.columns import SessionState

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...store.handle import StoreHandle
    from ...store.layout import DataDir
    from ...text.tokens import TokenModel

__all__ = ["MAX_PAGE", "JournalFile", "describe", "pack_page", "scan_journals"]

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
    return SessionPage(
        tuple(shown), total, offset, next_offset, "".join(lines) + _trailer(offset, end, total, next_offset)
    )


def _trailer(offset: int, end: int, total: int, next_offset: int | None) -> str:
    if next_offset is None:
        return f"({total} sessions)\n" if offset == 0 else f"(sessions {offset + 1}-{end} of {total}; no more)\n"
    return f"(sessions {offset + 1}-{end} of {total}; next page: offset={next_offset})\n"
