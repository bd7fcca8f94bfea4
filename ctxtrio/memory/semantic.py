"""Semantic recall of session entries (``--embed-model``): their vectors, kept up to date in the background.

:class:`EntryVectors` owns one background task, :meth:`EntryVectors.run`, started in
``_wiring.py``'s background nursery beside the chunks' (``docs/embedding.py``)::

    wait for a wake-up (an entry appended) or POLL_S
    list the session journals; drop the vectors of sessions whose journal is gone
    for each journal changed since its entries were last all embedded (newest first):
        read the session (:func:`embeddable`): its live entries, and every entry it holds
        drop the vectors of entries it no longer holds (or holds with another text)
        embed its live entries not embedded yet: BATCH_PARTS parts a request, through the breaker

Vectors live in ``session-vectors.sqlite3`` beside the chunks' file (the same
:class:`~ctxtrio.store.vectors.VectorStore`, journal = session id). An entry's row is
keyed by its id and a hash of its text (:func:`~.state.base.entry_key`), so a session removed
and made again under the same id, or imported over a pruned one, is never matched by
an old vector. What is done lives only in that file: the task resumes after a
restart, catches up sessions written before ``--embed-model`` was set, and embeds
nothing twice. An append only wakes it (a send that never blocks), so no
acknowledgement waits for an embedding.

**What a vector lives as long as.** Exactly as long as the journal holds the text it was
computed from. Deleting an entry, deleting a session and compaction (which supersedes
entries by a summary) are all undoable (``restore``, undo compaction), and the journal
keeps the text, so the vector stays: an undo needs no new embedding, and recall ranks
only live entries, so a retired entry's vector never matches. The summary a
compaction writes is a live entry and is embedded like any other. ``prune`` removes
retired entries and whole sessions from the journals for good; their vectors go at the
next pass. An export carries no vectors (they are derived, and the importing side
may embed with another model); an imported session gets rows like a new one, and
its texts the file already holds are not sent again (vectors are kept by text).

Failures are handled as the chunks' embedder handles them (both are
:class:`~ctxtrio.store.vector_task.VectorTask`): an unreachable or slow endpoint pauses the task (RETRY_S doubling to RETRY_MAX_S); an
entry refused alone while a one-word probe is answered is sent again part by part (the parts taken are
embedded) and recorded as refused (until
``ctxtrio doctor --repair`` forgets it: ``_check_vectors``); a
broken vectors file stops session recall by meaning, never the server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from .._errors import StoreError
from ..store.vector_batch import Pending
from ..store.vector_look import look
from ..store.vector_task import RETRY_REFUSED, VectorTask
from ..store.vectors import VectorStore
from ..text.embedding import text_parts
from ..text.plural import plural
from .admin.prune import replay_records
from .model import EntryVectorCheck
from .sessions.repository import scan_session_ids
from .state.base import entry_key, entry_of

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..llm.embeddings import Embedder
    from ..store.handle import StoreHandle
    from ..store.layout import DataDir
    from .sessions.store import SessionStore
    from .state.columns import SessionState

__all__ = ["Embeddable", "EntryHits", "EntryVectors", "check_vectors", "embeddable", "embeddable_of", "entry_of"]

BATCH_PARTS = 16


@dataclass(frozen=True, slots=True)
class Embeddable:
    """One session as the embedder sees it: live entries to embed, and every entry the journal holds."""

    #: (key, text) of each live entry; none for a deleted session (recall refuses it).
    live: tuple[tuple[str, str], ...]
    #: Keys of every entry the journal holds, retired ones too (their vectors stay).
    held: frozenset[str]


def embeddable_of(state: SessionState) -> Embeddable | None:
    """What ``state`` gives the embedder; None when the session has no journal."""
    if not state.exists:
        return None
    live: list[tuple[str, str]] = []
    held: set[str] = set()
    for item in state.order:
        key = entry_key(item.id, item.text)
        held.add(key)
        if item.live and state.deleted_at is None:
            live.append((key, item.text))
    return Embeddable(tuple(live), frozenset(held))


async def embeddable(sessions: SessionStore, session_id: str) -> Embeddable | None:
    """One session as the embedder sees it, read as every call reads it (under its lock, refreshed from the journal)."""
    with sessions.use(session_id) as session:
        async with session.lock:
            return await sessions.sync(session, embeddable_of, must_exist=False)


@dataclass(frozen=True, slots=True)
class EntryHits:
    """Entry keys of one session nearest a query, best first, or why there are none (``skipped``)."""

    keys: list[str]
    skipped: str | None = None


@dataclass(slots=True)
class _Progress:
    embedded: int = 0
    vectors: int = 0
    #: (entries embedded, refused, vectors) in the file, as of the last pass.
    stored: tuple[int, int, int] = (0, 0, 0)
    #: Session id -> the journal's (size, mtime_ns) when all its live entries were embedded.
    stamps: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: The dimension they were embedded in (a change drops every row of the old one: all are looked at again).
    stamped_dim: int | None = None


class EntryVectors(VectorTask):
    """Session entries' vectors for one embedding model: kept up to date in the background, asked by recalls."""

    def __init__(self, sessions: SessionStore, embedder: Embedder, vectors: VectorStore) -> None:
        super().__init__(embedder, vectors, "session entries")
        self._sessions = sessions
        self._data: DataDir = sessions.handle.data
        self._progress = _Progress()

    @property
    def embedded(self) -> tuple[int, int]:
        """(entries, vectors) embedded by this process so far."""
        return self._progress.embedded, self._progress.vectors

    @property
    def stored(self) -> tuple[int, int, int]:
        """(entries embedded, entries refused, vectors) in the file for this model, as of the last pass."""
        return self._progress.stored

    def describe(self) -> str:
        """One line for context_status and context_guide: how far the session entries are embedded."""
        entries, refused, vectors = self._progress.stored
        line = f"session entries by meaning: {entries:,} embedded ({plural(vectors, 'vector')})"
        if refused:
            line += f", {refused} refused by the endpoint"
        return f"{line}; {self.state}{f'; {RETRY_REFUSED}' if refused else ''}"

    async def nearest(self, session_id: str, query: str, limit: int) -> EntryHits:
        """Keys of the entries of ``session_id`` nearest ``query`` in meaning (within QUERY_S)."""
        hits, skipped = await self._nearest(query, [session_id], limit)
        return EntryHits([hit.item for hit in hits], skipped)

    def _embedded(self, journal: str, items: int, vectors: int, *, refused: bool = False) -> None:
        self._progress.embedded += items
        self._progress.vectors += vectors

    async def _pass(self) -> bool:
        """One look at the journals; True if it embedded (or tried to) anything."""
        stamps = await trio.to_thread.run_sync(_journal_stamps, self._data)
        seen = self._progress.stamps
        if self._progress.stamped_dim != self._dim:  # the endpoint answered another dimension
            seen.clear()
            self._progress.stamped_dim = self._dim
        if await self._refusals_forgotten():  # doctor --repair: the entries refused are to be sent again
            seen.clear()
        if stamps == seen and self.state == "caught up":
            return False  # every journal as it was when all its entries were embedded: no write, no count
        await self._drop_except(set(stamps))
        for gone in set(seen) - set(stamps):
            del seen[gone]
        changed = sorted((s for s in stamps if seen.get(s) != stamps[s]), key=lambda s: -stamps[s][1])
        busy = False
        for session_id in changed:
            result = await self._session(session_id)
            if result is None:
                return True  # the endpoint failed (waited already): look again
            busy |= result
            seen[session_id] = stamps[session_id]
        if self._dim is not None:
            self._progress.stored = await trio.to_thread.run_sync(self._vectors.counts, self.model, self._dim)
        if not busy:
            await self._tidy()
            self.state = "caught up"
        return busy

    async def _session(self, session_id: str) -> bool | None:
        """Embed what one session lacks; whether anything was sent, None when the endpoint failed."""
        found = await embeddable(self._sessions, session_id)
        if found is None:
            return False
        dim = self._dim
        # This session's rows only (the primary key's prefix): a pass over many changed
        # sessions must not read the whole file once per session.
        done = (
            await trio.to_thread.run_sync(lambda: self._vectors.done(self.model, dim, journal=session_id))
            if dim
            else {}
        )
        have = done.get(session_id, set())
        stale = have - found.held
        if stale:
            await self._drop_items(session_id, stale)
        todo = [Pending(key, 0, 0, text_parts(text)) for key, text in found.live if key not in have]
        if not todo:
            return False
        self.state = "embedding"
        batch: list[Pending] = []
        for one in todo:
            batch.append(one)
            if sum(len(pending.parts) for pending in batch) >= BATCH_PARTS:
                if not await self._embed(session_id, batch):
                    return None
                batch = []
        if batch and not await self._embed(session_id, batch):
            return None
        return True


async def check_vectors(handle: StoreHandle, model: str, dim: int | None, *, repair: bool) -> EntryVectorCheck:
    """:meth:`SessionService.check_vectors <ctxtrio.memory.service.SessionService.check_vectors>`: journals read as stored."""
    sessions: dict[str, Embeddable] = {}
    for session_id in await trio.to_thread.run_sync(scan_session_ids, handle.data):
        read = await handle.read(handle.data.session_journal(session_id))
        found = embeddable_of(replay_records(session_id, [r.data for r in read.records]))
        if found is not None:
            sessions[session_id] = found
    vectors = VectorStore(handle.data.session_vectors_path)
    try:
        return await trio.to_thread.run_sync(lambda: _check_vectors(vectors, model, dim, sessions, repair=repair))
    finally:
        await trio.to_thread.run_sync(vectors.close)


def _check_vectors(
    vectors: VectorStore, model: str, dim: int | None, sessions: Mapping[str, Embeddable], *, repair: bool
) -> EntryVectorCheck:
    """How many live entries of ``sessions`` have a vector of ``model`` in ``vectors`` (blocking; with
    ``repair``, opens it and leaves it open).

    ``dim`` None: the one dimension stored, if one. ``repair`` drops what the embedder's
    next pass would: vectors of sessions gone, of another model or dimension, and of
    entries no journal holds with that text; and it forgets the entries the endpoint
    refused, which a server then sends again (one running too, within POLL_S). Without ``repair`` nothing is written: the file
    is only looked at (:func:`~ctxtrio.store.vector_look.look`: not migrated nor healed, none
    created, nothing left beside it).
    """
    entries = sum(len(found.live) for found in sessions.values())
    if not repair:
        layout = look(vectors.path, model, dim)
        if not layout.current:
            return EntryVectorCheck(dim, entries, 0, 0, layout.describe())
        return EntryVectorCheck(layout.dimension, entries, _embedded(sessions, layout.done), 0)
    vectors.open()
    stored = vectors.dimensions(model)
    checked = dim if dim is not None else (stored[0] if len(stored) == 1 else None)
    dropped = vectors.drop_except(model, checked, set(sessions))
    retried = vectors.forget_refused(model)
    done = vectors.done(model, checked) if checked is not None else {}
    for session_id, have in done.items():
        stale = have - sessions[session_id].held if session_id in sessions else set()
        if stale:
            dropped += vectors.drop_items(model, session_id, stale)
    return EntryVectorCheck(checked, entries, _embedded(sessions, done), dropped, retried=retried)


def _embedded(sessions: Mapping[str, Embeddable], done: Mapping[str, set[str]]) -> int:
    """Live entries of ``sessions`` whose keys ``done`` (session -> keys with rows) holds."""
    return sum(
        sum(1 for key, _ in found.live if key in done.get(session_id, ())) for session_id, found in sessions.items()
    )


def _journal_stamps(data: DataDir) -> dict[str, tuple[int, int]]:
    """Session id -> (size, mtime_ns) of its journal (blocking)."""
    stamps: dict[str, tuple[int, int]] = {}
    for session_id in scan_session_ids(data):
        try:
            stat = data.session_journal(session_id).stat()
        except FileNotFoundError:
            continue  # removed meanwhile
        except OSError as exc:
            raise StoreError(f"cannot read {data.sessions}: {exc.strerror or exc}") from exc
        stamps[session_id] = (stat.st_size, stat.st_mtime_ns)
    return stamps
