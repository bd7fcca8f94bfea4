"""A small per-session summary file, so listing and status need not replay sessions.

``sessions/<id>.summary.json`` holds what ``context_list_sessions`` and
``context_status`` show (title, counts, token totals, last activity) as of one journal
offset, plus the journal's inode and the token model the totals were counted with. It
is derived: written atomically (temporary file, rename) whenever a process has brought
the session's state forward, never fsynced, and trusted only while it is *fresh*: same
inode, same offset as the journal's size, same token model, and a CRC-32 of its
fields that matches. It is read as untrusted bytes (:func:`~ctxtrio.memory.state.derived.read_derived`: no
symlink followed, a regular file, at most :data:`MAX_BYTES`), and its numbers must be
finite and not negative. A stale, corrupt or missing summary is ignored and rebuilt
from the journal; delete them all and nothing is lost.

Everything here is blocking file I/O (call it from a worker thread) or pure.
"""

from __future__ import annotations

import json
import math
import os
import zlib
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Final

from ..model import SessionInfo
from ..state.derived import model_key, read_derived, replace_file

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from ...text.tokens import TokenModel
    from ..state.columns import SessionState

__all__ = [
    "SessionSummary",
    "fresh_summary",
    "read_summary",
    "summarize_state",
    "summary_path",
    "write_summaries",
    "write_summary",
]

_VERSION: Final = 6  # 4: foldable; 5: entry_line indents a text line that starts with "[" (live_tokens); 6: retired
#: A summary file is a few hundred bytes; one larger than this is not one.
MAX_BYTES: Final = 64 * 1024
_SUFFIX: Final = ".summary.json"


def summary_path(journal: Path) -> Path:
    """``sessions/<id>.summary.json`` beside ``sessions/<id>.jsonl``."""
    return journal.with_name(journal.name.removesuffix(".jsonl") + _SUFFIX)


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session's listing and status facts as of journal offset ``size`` of inode ``ino``."""

    session_id: str
    ino: int
    size: int
    model: str
    title: str
    created: float
    last_activity: float
    live: int
    live_tokens: int
    pins: int
    pinned_tokens: int
    superseded: int
    deleted: int
    summaries: int
    deleted_at: float | None
    #: Live entries a compaction may fold: unpinned, not summaries (it folds no pin, and merges summaries only
    #: into a fold of at least two such entries).
    foldable: int
    #: Deleted summaries that keep nothing out of recall: undone, or merged into a later compaction's.
    retired: int

    def info(self) -> SessionInfo:
        return SessionInfo(self.session_id, self.title, self.live, self.last_activity, self.deleted_at)

    def fresh(self, ino: int, size: int, model: str | None = None) -> bool:
        """Whether this still describes the journal (and, given ``model``, its token counts)."""
        return self.ino == ino and self.size == size and (model is None or model == self.model)


def summarize_state(state: SessionState, ino: int) -> SessionSummary:
    """The summary of ``state`` (which ends at ``state.applied_offset``)."""
    return SessionSummary(
        session_id=state.session_id,
        ino=ino,
        size=state.applied_offset,
        model="" if state.light else model_key(state.model),
        title=state.title,
        created=state.created,
        last_activity=state.last_activity,
        live=state.live_count,
        live_tokens=state.live_tokens,
        pins=len(state.pins),
        pinned_tokens=state.pinned_tokens,
        superseded=state.superseded,
        deleted=state.deleted,
        summaries=state.summaries,
        deleted_at=state.deleted_at,
        # Pins are few; a pinned summary is counted in both pins and summaries.
        foldable=state.live_count
        - len(state.pins)
        - state.summaries
        + sum(1 for pin in state.pins.values() if pin.role == "summary"),
        retired=retired_summaries(state),
    )


def retired_summaries(state: SessionState) -> int:
    """Deleted summaries that supersede nothing (undone, or merged into a later compaction's summary): counted
    apart, as a week of merged compactions read "229 deleted" of a session where nothing was deleted."""
    deleted = state.deleted_flags
    keeping = {by for folded, by in state.superseded_by.items() if deleted[by] and not deleted[folded]}
    return sum(1 for summary in state.folds if deleted[summary] and summary not in keeping)


def write_summary(journal: Path, summary: SessionSummary) -> None:
    """Replace the summary file atomically; failing to write it is not an error (it is derived)."""
    fields = {"v": _VERSION, **asdict(summary)}
    fields["crc"] = _checksum(fields)
    replace_file(summary_path(journal), [json.dumps(fields, ensure_ascii=False).encode()])


def _checksum(fields: dict[str, object]) -> int:
    return zlib.crc32(json.dumps({k: v for k, v in fields.items() if k != "crc"}, sort_keys=True).encode())


def write_summaries(pending: Iterable[tuple[Path, SessionSummary]]) -> None:
    """Write each (journal, summary) pair (see :func:`write_summary`).

    A summary whose inode was not known when it was made (``ino`` 0: the session's
    journal was created by its first append) gets the journal's inode now.
    """
    for journal, summary in pending:
        if not summary.ino:
            try:
                summary = replace(summary, ino=os.stat(journal).st_ino)
            except OSError:
                continue
        write_summary(journal, summary)


def read_summary(journal: Path, session_id: str) -> SessionSummary | None:
    """The summary file of ``journal``, or None when it is missing, unreadable or malformed."""
    raw = read_derived(summary_path(journal), MAX_BYTES)
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("v") != _VERSION or data.get("session_id") != session_id:
        return None
    if data.get("crc") != _checksum(data):
        return None
    try:
        summary = SessionSummary(**{key: data[key] for key in SessionSummary.__slots__})
    except (KeyError, TypeError):
        return None
    return summary if _well_typed(summary) else None


def fresh_summary(journal: Path, session_id: str, model: TokenModel) -> SessionSummary | None:
    """The summary of ``journal`` if it is fresh for the journal as it is now and for ``model``."""
    try:
        stat = os.stat(journal)
    except OSError:
        return None
    summary = read_summary(journal, session_id)
    if summary is None or not summary.fresh(stat.st_ino, stat.st_size, model_key(model)):
        return None
    return summary


def _well_typed(summary: SessionSummary) -> bool:
    ints = (
        summary.ino,
        summary.size,
        summary.live,
        summary.live_tokens,
        summary.pins,
        summary.pinned_tokens,
        summary.superseded,
        summary.deleted,
        summary.summaries,
        summary.foldable,
        summary.retired,
    )
    floats = (summary.created, summary.last_activity, 0.0 if summary.deleted_at is None else summary.deleted_at)
    return (
        all(isinstance(value, int) and not isinstance(value, bool) and value >= 0 for value in ints)
        and all(
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
            for value in floats
        )
        and isinstance(summary.title, str)
        and isinstance(summary.model, str)
    )
