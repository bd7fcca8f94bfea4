"""Moving sessions between data dirs: raw journal records out, the same session back in (:class:`ArchiveMethods`; the rest is pure).

An export holds each session's journal records as they are (envelope included), so
nothing is lost: entries of every status, pins, tags, summaries with what they fold,
patches, and timestamps. An import appends them to a session that has no journal yet,
in the same order and with their original timestamps. Entry ids are ``e<seq>``; the
import gives each entry the id that its sequence number in the new journal makes
(:func:`remap`), so a session exported whole and imported into a fresh id keeps every id,
and otherwise the ids are remapped consistently (patches and folds follow).

Importing is idempotent: a session whose content (:func:`content_key`) equals what is
imported is not written again, whatever its ids. Imported records are checked like tool
input first (:func:`check_records`): a file that a person edited or another program
wrote cannot store what an append could not (a timestamp of ``NaN`` or ``1e308``, an
unknown role, an id that is not an id).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import trio

from ..._errors import InputError
from ...store.ids import ID_PATTERN, validate_id
from ...store.records import JSON, UNPAIRED_SURROGATE, NewRecord, Record, storable
from ...store.results import JournalExistsError
from ..arguments import check_tags
from ..model import MAX_ENTRY_CHARS, ROLES, SessionContents
from ..sessions.store import same_state
from ..sessions.summary import retired_summaries
from ..state.base import ENTRY_ID_FIELDS
from .lifecycle import session_info
from .prune import replay_records

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from ..model import Entry
    from ..sessions.store import SessionStore
    from ..state.columns import SessionState

__all__ = ["ArchiveMethods", "ImportResult", "candidate_ids", "check_records", "content_key", "remap"]

IdsKept = Literal["preserved", "remapped"]

_ENVELOPE = ("v", "seq", "ts", "kind", "id")
#: Session ids tried when the imported one holds something else: ``id``, ``id-2``, ... ``id-99``.
MAX_CANDIDATES = 99

#: Record kinds a session journal holds.
KINDS = frozenset({"session", "entry", "patch", "prune"})
#: Latest timestamp accepted, past the importing machine's clock (clocks differ a little).
CLOCK_SKEW_S = 86_400.0

ContentKey = tuple[str, tuple[tuple[str, str, tuple[str, ...], bool, str, int], ...]]


@dataclass(frozen=True, slots=True)
class ImportResult:
    """One session imported (or found already there).

    ``outcome``: ``imported`` (written now), ``unchanged`` (the same content was there),
    ``restored`` (it was there but deleted, and is restored). ``ids`` says whether the
    session id and every entry id are as in the export (``preserved``) or not (``remapped``).
    """

    source_id: str
    session_id: str
    outcome: Literal["imported", "unchanged", "restored"]
    records: int
    ids: Literal["preserved", "remapped"]
    remapped_entries: int
    #: Ids passed over, each with why (``"s: holds other content, left as it was"``).
    skipped: tuple[str, ...] = ()


def content_key(state: SessionState) -> ContentKey:
    """What a session holds, without ids, sequence numbers or deletion of the whole session."""
    ordinal = {item.id: item.ordinal for item in state.order}
    return state.title, tuple(
        (
            item.role,
            item.text,
            item.tags,
            item.pinned,
            item.status,
            ordinal.get(item.superseded_by, -1) if item.superseded_by is not None else -1,
        )
        for item in state.order
    )


def records_key(session_id: str, records: Sequence[Record]) -> tuple[ContentKey, bool]:
    """The content key of imported records, and whether they leave the session deleted."""
    state = replay_records(session_id, list(records))
    return content_key(state), state.deleted_at is not None


def candidate_ids(session_id: str) -> Iterator[str]:
    """``session_id``, then ``session_id-2`` .. ``-99`` (each a valid id)."""
    yield session_id
    for number in range(2, MAX_CANDIDATES + 1):
        suffix = f"-{number}"
        candidate = session_id[: 64 - len(suffix)] + suffix
        if ID_PATTERN.fullmatch(candidate):
            yield candidate


def remap(records: Sequence[Record], session_id: str) -> tuple[list[NewRecord], int]:
    """Records to append to an empty journal of ``session_id``, and how many entry ids changed.

    Entry ``n`` of the batch gets id ``e<its sequence number>``; patches, folds and merges are
    rewritten to follow; ``session`` records take the new session id; timestamps are kept.
    """
    ids: dict[str, str] = {}
    for seq, record in enumerate(records, start=1):
        if record.get("kind") == "entry":
            ids[str(record.get("id"))] = f"e{seq}"
    out: list[NewRecord] = []
    for record in records:
        kind = str(record.get("kind"))
        old_id = str(record.get("id"))
        body: Record = {key: value for key, value in record.items() if key not in _ENVELOPE}
        for field in ENTRY_ID_FIELDS:
            listed = body.get(field)
            if isinstance(listed, list):
                mapped: list[JSON] = [ids.get(f, f) if isinstance(f, str) else f for f in listed]
                body[field] = mapped
        if kind == "session":
            new_id = session_id
        else:
            new_id = ids.get(old_id, old_id)
        ts = record.get("ts")
        out.append(NewRecord(kind, body, id=new_id, ts=float(ts) if isinstance(ts, (int, float)) else None))
    changed = sum(1 for old, new in ids.items() if old != new)
    return out, changed


def check_records(session_id: str, records: Sequence[Record], *, now: float | None = None) -> None:
    """InputError naming the session and record when a record is not one a journal could hold.

    Timestamps are finite seconds from 1970 to a day past ``now``; kinds, ids, roles,
    texts, tags and flags are what appends write.
    """
    latest = (time.time() if now is None else now) + CLOCK_SKEW_S
    for number, record in enumerate(records, start=1):
        problem = _record_problem(record, latest)
        if problem:
            raise InputError(f"session {session_id!r} record {number}: {problem}; nothing of it was imported")


def _record_problem(record: Record, latest: float) -> str:
    kind, ts, record_id = record.get("kind"), record.get("ts"), record.get("id")
    if kind not in KINDS:
        return f"kind {str(kind)[:40]!r} is not one of {', '.join(sorted(KINDS))}"
    if not isinstance(ts, (int, float)) or isinstance(ts, bool) or not math.isfinite(ts) or not 0 <= ts <= latest:
        return f"timestamp {str(ts)[:40]} is not a time between 1970 and now"
    seq = record.get("seq", 0)
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        return f"seq {str(seq)[:40]} is not a whole number"
    if not isinstance(record_id, str) or ID_PATTERN.fullmatch(record_id) is None:
        return f"id {str(record_id)[:80]!r} is not an id"
    if kind == "entry" and (problem := _entry_problem(record, record_id)):
        return problem
    for flag in ("pinned", "deleted", "restored"):
        if flag in record and not isinstance(record[flag], bool):
            return f"{kind} {record_id} has {flag} = {str(record[flag])[:40]}, not true or false"
    title = record.get("title")
    if title is not None and not isinstance(title, str):
        return f"session record {record_id} has a title that is not text"
    if isinstance(title, str) and not storable(title):
        return f"session record {record_id} has a title with {UNPAIRED_SURROGATE}"
    return ""


def _entry_problem(record: Record, record_id: str) -> str:
    """What is wrong with an entry record's text, role, tags or folds ("" if nothing)."""
    text, role, tags = record.get("text"), record.get("role"), record.get("tags", [])
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_ENTRY_CHARS:
        return f"entry {record_id} has no text, or more than {MAX_ENTRY_CHARS} characters"
    if not storable(text):
        return f"entry {record_id} has text with {UNPAIRED_SURROGATE}"
    if role not in ROLES:
        return f"entry {record_id} has role {str(role)[:40]!r}, not one of {', '.join(ROLES)}"
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        return f"entry {record_id} has tags that are not a list of short words"
    words = [str(tag) for tag in tags]
    try:  # as an append checks them, and stores them: casefolded, without "#", each once, at most ten
        stored = list(check_tags(words))
    except InputError as exc:
        return f"entry {record_id}: {exc}"
    if stored != words:
        return f"entry {record_id} has tags {str(tags)[:80]}, which an append stores as {str(stored)[:80]}"
    for field in ENTRY_ID_FIELDS:
        listed = record.get(field, [])
        if not isinstance(listed, list) or not all(isinstance(f, str) and ID_PATTERN.fullmatch(f) for f in listed):
            return f"entry {record_id} {field} something that is not a list of entry ids"
    return ""


class ArchiveMethods:
    """Sessions out and back in: methods of :class:`~ctxtrio.memory.service.SessionService`."""

    _sessions: SessionStore

    async def export(self, session_id: str) -> list[Entry]:
        """Every entry of a session in order, whatever its status."""
        with self._sessions.use(session_id) as session:
            async with session.lock:
                return await self._sessions.sync(session, _snapshots)

    async def contents(self, session_id: str) -> SessionContents:
        """A session's list line and every entry in order, whatever its status; deleted sessions too."""
        with self._sessions.use(session_id) as session:
            async with session.lock:
                return await self._sessions.sync(session, _contents, deleted_ok=True)

    async def records(self, session_id: str) -> list[Record]:
        """Every record of a session's journal as stored, deleted sessions too (for export)."""
        with self._sessions.use(session_id) as session:
            async with session.lock:
                await self._sessions.sync(session, same_state, deleted_ok=True)
                return await self._sessions.records(session)

    async def import_session(self, session_id: str, records: Sequence[Record]) -> ImportResult:
        """Store exported records as a session: under ``session_id`` if it is free, else ``-2``...

        Idempotent: where the same content is already stored (deleted or not: a deleted
        one is restored), nothing is written. A session is written whole or not at all
        (:meth:`~ctxtrio.store.handle.StoreHandle.install`), under its lock, and never onto
        a journal that holds records, even one another process created meanwhile: that id
        is passed over and the result says so. See the module's docstring.

        Cancelled before a journal is queued to the store, nothing is written. Once queued
        the session may still be written, whole: importing the same records again then
        answers ``unchanged`` for it (a deleted one that was being restored: ``restored``
        or ``unchanged``), never a second copy.
        """
        validate_id(session_id, "session_id")
        await trio.to_thread.run_sync(check_records, session_id, records)
        # The content key replays every record (3.7 of 10 CPU-s of a 50,000-entry import):
        # it is worked out only when a candidate id holds a session to compare with.
        keyed: list[tuple[ContentKey, bool]] = []
        skipped: list[str] = []
        for candidate in candidate_ids(session_id):
            with self._sessions.use(candidate) as session:
                async with session.lock:
                    while True:
                        state = await self._sessions.sync(session, same_state, must_exist=False)
                        if state.exists:
                            break
                        batch, changed = remap(records, candidate)
                        try:
                            await self._sessions.handle.install(session.path, batch)
                        except JournalExistsError:
                            continue  # another process created it meanwhile: look at what it holds
                        # Read again when next used, not replayed now: a CLI import never uses
                        # it, and the replay cost as much CPU as the rest of the import.
                        session.state, session.file_id = None, None
                        kept: IdsKept = "preserved" if candidate == session_id and not changed else "remapped"
                        return ImportResult(
                            session_id, candidate, "imported", len(batch), kept, changed, tuple(skipped)
                        )
                    if not keyed:
                        keyed.append(await trio.to_thread.run_sync(records_key, session_id, records))
                    key, deleted = keyed[0]
                    if content_key(state) != key:
                        skipped.append(f"{candidate}: holds other content, left as it was")
                        continue
                    same: IdsKept = "preserved" if candidate == session_id else "remapped"
                    if state.deleted_at is not None and not deleted:
                        await self._sessions.append(session, [NewRecord("session", {"deleted": False}, id=candidate)])
                        return ImportResult(session_id, candidate, "restored", 0, same, 0, tuple(skipped))
                    return ImportResult(session_id, candidate, "unchanged", 0, same, 0, tuple(skipped))
        raise InputError(
            f"sessions {session_id!r} to {session_id}-99 all hold other content: import it under another id"
        )


def _snapshots(state: SessionState) -> list[Entry]:
    return [item.snapshot() for item in state.order]


def _contents(state: SessionState) -> SessionContents:
    return SessionContents(
        session_info(state), tuple(item.snapshot() for item in state.order), retired_summaries(state)
    )
