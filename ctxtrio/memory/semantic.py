"""Semantic recall of session entries (``--embed-model``): their vectors, kept up to date in the background.

:class:`EntryVectors` owns one background task, :meth:`EntryVectors.run`, started in
``_app.py``'s background nursery beside the chunks' (``docs/embedding.py``)::

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
may embed with another model); an imported session is embedded like a new one.

Failures are handled as the chunks' embedder does (``docs/embedding.py``): an
unreachable or slow endpoint pauses the task (RETRY_S doubling to RETRY_MAX_S); an
entry refused alone while a one-word probe is answered is recorded as refused; a
broken vectors file stops session recall by meaning, never the server.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from .._errors import LLMError, LLMResponseError, StoreError
from ..store.vectors import VectorRow, VectorStore
from ..text.embedding import text_parts
from .sessions.repository import scan_session_ids
from .state.base import entry_key

if TYPE_CHECKING:
    from ..llm.embeddings import Embedder
    from ..store.layout import DataDir
    from .sessions.store import SessionStore
    from .state.columns import SessionState

__all__ = ["Embeddable", "EntryHits", "EntryVectors", "embeddable", "embeddable_of", "entry_of"]

log = logging.getLogger("ctxtrio.embeddings")

BATCH_PARTS = 16
POLL_S = 5.0
RETRY_S = 1.0
RETRY_MAX_S = 30.0
#: How long a recall waits for its query's vector before answering from BM25 alone.
QUERY_S = 0.5


def entry_of(key: str) -> str:
    """The entry id in a vector key."""
    return key.partition("#")[0]


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
    state: str = "starting"
    embedded: int = 0
    vectors: int = 0
    passes: int = 0
    #: Session id -> the journal's (size, mtime_ns) when all its live entries were embedded.
    stamps: dict[str, tuple[int, int]] = field(default_factory=dict)


class EntryVectors:
    """Session entries' vectors for one embedding model: kept up to date in the background, asked by recalls."""

    def __init__(self, sessions: SessionStore, embedder: Embedder, vectors: VectorStore) -> None:
        self._sessions = sessions
        self._data: DataDir = sessions.handle.data
        self._embedder = embedder
        self._vectors = vectors
        self._wake_send, self._wake_recv = trio.open_memory_channel[None](1)
        self._progress = _Progress()
        self._retry_s = RETRY_S
        #: Vector length: from the vectors file at start, then from each answer (None until known).
        self._dim: int | None = None

    @property
    def model(self) -> str:
        return self._embedder.model

    @property
    def state(self) -> str:
        """ "starting", "embedding", "caught up", "endpoint unreachable" or "stopped"."""
        return self._progress.state

    @property
    def passes(self) -> int:
        """Looks at the journals finished so far (one that starts after a change sees it)."""
        return self._progress.passes

    @property
    def embedded(self) -> tuple[int, int]:
        """(entries, vectors) embedded by this process so far."""
        return self._progress.embedded, self._progress.vectors

    def wake(self) -> None:
        """Tell the embedder that a session changed; never blocks, never fails."""
        try:
            self._wake_send.send_nowait(None)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # a wake-up is already pending, or the task is gone

    # -- the recall side --------------------------------------------------------------

    async def nearest(self, session_id: str, query: str, limit: int) -> EntryHits:
        """Keys of the entries of ``session_id`` nearest ``query`` in meaning (within QUERY_S)."""
        if self._progress.state == "stopped":
            return EntryHits([], "semantic recall is off (the vectors file failed; see the server log)")
        if self._dim is None:
            return EntryHits([], "semantic recall skipped: nothing is embedded yet")
        with trio.move_on_after(QUERY_S):
            try:
                vector = await self._embedder.query(query)
            except LLMError as exc:
                return EntryHits([], f"semantic recall skipped: the embedding endpoint failed ({exc})")
            try:
                found = await trio.to_thread.run_sync(
                    lambda: self._vectors.nearest(self.model, vector, journals=[session_id], limit=limit)
                )
            except StoreError as exc:
                return EntryHits([], f"semantic recall skipped: {exc}")
            return EntryHits([hit.item for hit in found])
        return EntryHits([], f"semantic recall skipped: the embedding endpoint did not answer within {QUERY_S:g} s")

    # -- the background task ----------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep the vectors up to date until cancelled (see the module docstring)."""
        try:
            await trio.to_thread.run_sync(self._vectors.open)
            dims = await trio.to_thread.run_sync(self._vectors.dimensions, self.model)
            self._dim = dims[0] if len(dims) == 1 else None
        except StoreError as exc:
            log.error("semantic recall of sessions is off: %s", exc)
            self._progress.state = "stopped"
            task_status.started()
            return
        task_status.started()
        try:
            while True:
                try:
                    busy = await self._pass()
                except StoreError as exc:
                    log.error("semantic recall of sessions stops: %s", exc)
                    self._progress.state = "stopped"
                    return
                self._progress.passes += 1
                if not busy:
                    with trio.move_on_after(POLL_S):
                        await self._wake_recv.receive()
        finally:
            self._wake_recv.close()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._vectors.close)

    async def _pass(self) -> bool:
        """One look at the journals; True if it embedded (or tried to) anything."""
        stamps = await trio.to_thread.run_sync(_journal_stamps, self._data)
        await trio.to_thread.run_sync(self._vectors.drop_except, self.model, self._dim, set(stamps))
        seen = self._progress.stamps
        for gone in set(seen) - set(stamps):
            del seen[gone]
        changed = sorted((s for s in stamps if seen.get(s) != stamps[s]), key=lambda s: -stamps[s][1])
        if not changed:
            self._progress.state = "caught up"
            return False
        busy = False
        for session_id in changed:
            result = await self._session(session_id)
            if result is None:
                return True  # the endpoint failed (waited already): look again
            busy |= result
            seen[session_id] = stamps[session_id]
        if not busy:
            self._progress.state = "caught up"
        return busy

    async def _session(self, session_id: str) -> bool | None:
        """Embed what one session lacks; whether anything was sent, None when the endpoint failed."""
        found = await embeddable(self._sessions, session_id)
        if found is None:
            return False
        dim = self._dim
        done = await trio.to_thread.run_sync(self._vectors.done, self.model, dim) if dim else {}
        have = done.get(session_id, set())
        stale = have - found.held
        if stale:
            await trio.to_thread.run_sync(self._vectors.drop_items, self.model, session_id, stale)
        todo = [(key, text) for key, text in found.live if key not in have]
        if not todo:
            return False
        self._progress.state = "embedding"
        batch: list[tuple[str, str]] = []
        parts = 0
        for key, text in todo:
            batch.append((key, text))
            parts += len(text_parts(text))
            if parts >= BATCH_PARTS:
                if not await self._embed(session_id, batch):
                    return None
                batch, parts = [], 0
        if batch and not await self._embed(session_id, batch):
            return None
        return True

    async def _embed(self, session_id: str, batch: list[tuple[str, str]]) -> bool:
        """One request for ``batch`` (entry key, text); on a refusal, entry by entry. False when the endpoint failed."""
        split = [(key, text_parts(text)) for key, text in batch]
        try:
            vectors = await self._embedder.documents([part.text for _, parts in split for part in parts])
        except LLMResponseError as exc:
            if len(batch) > 1:
                for one in batch:
                    if not await self._embed(session_id, [one]):
                        return False
                return True
            if not await self._probe():
                return await self._wait_for_endpoint(exc)
            log.warning("embedding endpoint refuses entry %s of %s: %s", entry_of(batch[0][0]), session_id, exc)
            await self._store(self._dim or 0, [VectorRow(session_id, batch[0][0], -1, 0, 0, None)])
            return True
        except LLMError as exc:
            return await self._wait_for_endpoint(exc)
        self._retry_s = RETRY_S
        rows: list[VectorRow] = []
        position = 0
        for key, parts in split:
            for number, part in enumerate(parts):
                rows.append(VectorRow(session_id, key, number, 0, 0, vectors[position], (part.start, part.end)))
                position += 1
        self._dim = len(vectors[0])
        await self._store(self._dim, rows)
        self._progress.embedded += len(batch)
        self._progress.vectors += len(rows)
        return True

    async def _store(self, dim: int, rows: list[VectorRow]) -> None:
        # Shielded: a vector the endpoint already computed is kept even if shutdown is underway.
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self._vectors.add, self.model, dim, rows)

    async def _probe(self) -> bool:
        try:
            await self._embedder.documents(["probe"])
        except LLMError:
            return False
        return True

    async def _wait_for_endpoint(self, exc: LLMError) -> bool:
        self._progress.state = "endpoint unreachable"
        log.info("embedding of session entries paused for %g s: %s", self._retry_s, exc)
        await trio.sleep(self._retry_s)
        self._retry_s = min(self._retry_s * 2, RETRY_MAX_S)
        return False


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
