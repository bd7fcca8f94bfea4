"""Semantic recall (``--embed-model``): the background embedder and the vector side of a search.

:class:`SemanticIndex` owns one background task, :meth:`SemanticIndex.run`, started in
``_wiring.py``'s background nursery::

    wait for a wake-up (an ingest or forget committed) or POLL_S
    refresh the catalog; drop vectors of documents gone or replaced, or of another model
    for each current document (oldest first) with chunks not embedded yet:
        read its generation file block by block (4 MB), cut each missing chunk into parts
        one request at a time: BATCH_PARTS parts, the client's embed_timeout_s, through the breaker
        store the vectors of whole chunks in one transaction, then the next batch

What is done lives only in the vectors file, so the task resumes after a restart where
it stopped, catches up documents ingested before ``--embed-model`` was set, and embeds
nothing twice. Ingest acknowledgements never wait for it: a commit only wakes it
(a send that never blocks on a one-slot channel). The backlog is the catalog itself, so
the queue in memory is bounded by one document's block.

When the endpoint is unreachable or too slow (LLMUnavailableError, LLMTimeoutError)
the task waits (RETRY_S, doubling to RETRY_MAX_S) and starts the pass again; searches
meanwhile answer from BM25 and say so. A chunk the endpoint refuses alone (an
LLMResponseError while a one-word probe is answered) is recorded as refused and skipped
for good; when the probe fails too, the endpoint is treated as down. A broken vectors
file (StoreError) stops semantic recall, logged, and never the server. Cancelling the
task closes the vectors file.

Each chunk is embedded in parts of at most PART_CHARS characters (an embedding model
reads a few hundred tokens: all-MiniLM-L6-v2 256, trained on 128), each part prefixed
with the chunk's heading trail and stored with the characters of the chunk it holds; a
chunk matches by its best part, and a search can show that part (``docs/hybrid.py``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from .._errors import LLMError, LLMResponseError, StoreError
from ..store.vectors import VectorHit, VectorRow, VectorStore
from ..text.embedding import PART_CHARS, Part, text_parts
from .chunks import chunk_on_line

if TYPE_CHECKING:
    from collections.abc import Collection

    from ..llm.embeddings import Embedder
    from .catalog import DocEntry
    from .chunks import StoredChunk
    from .repository import Repository

__all__ = ["PART_CHARS", "EmbeddingStatus", "Part", "SemanticIndex", "chunk_parts", "describe_semantic"]

log = logging.getLogger("ctxtrio.embeddings")

BATCH_PARTS = 16
POLL_S = 5.0
RETRY_S = 1.0
RETRY_MAX_S = 30.0
#: How long a search waits for its query's vector before answering from BM25 alone.
QUERY_S = 0.5


def chunk_parts(chunk: StoredChunk) -> list[Part]:
    """The parts a chunk is embedded as (:func:`~ctxtrio.text.embedding.text_parts`), led by its heading trail."""
    return text_parts(chunk.text, chunk.trail)


@dataclass(frozen=True, slots=True)
class EmbeddingStatus:
    """What ``context_status``, ``context_guide`` and ``ctxtrio doctor`` say about semantic recall."""

    model: str
    base_url: str
    #: Vector length; None until the endpoint first answered (or vectors were found).
    dimension: int | None
    #: "starting", "embedding", "caught up", "endpoint unreachable", "stopped".
    state: str
    chunks_total: int
    chunks_embedded: int
    chunks_refused: int
    vectors: int
    last_error: str | None
    memory_bytes: int

    @property
    def working(self) -> bool:
        return self.state in ("embedding", "caught up")


def describe_semantic(status: EmbeddingStatus | None) -> str:
    """One line for context_guide and context_status: whether semantic recall works, and how far it got."""
    if status is None:
        return "semantic recall: off (keyword search only; --embed-model ID adds search by meaning)"
    dim = f"{status.dimension} dimensions" if status.dimension is not None else "dimension not known yet"
    done = f"{status.chunks_embedded} of {status.chunks_total} chunks embedded"
    if status.chunks_refused:
        done += f", {status.chunks_refused} refused by the endpoint"
    state = status.state
    if status.last_error and not status.working:
        state += f" ({status.last_error})"
    return f"semantic recall: {status.model} at {status.base_url}, {dim}; {done}; {state}"


@dataclass(frozen=True, slots=True)
class SemanticHits:
    """The vector ranking of one search, or why there is none (``skipped``)."""

    hits: list[VectorHit]
    skipped: str | None = None


@dataclass(slots=True)
class _Progress:
    state: str = "starting"
    total: int = 0
    embedded: int = 0
    refused: int = 0
    vectors: int = 0


class SemanticIndex:
    """Chunk vectors for one embedding model: kept up to date in the background, asked by searches."""

    def __init__(self, repo: Repository, embedder: Embedder, vectors: VectorStore) -> None:
        self._repo = repo
        self._embedder = embedder
        self._vectors = vectors
        self._wake_send, self._wake_recv = trio.open_memory_channel[None](1)
        self._progress = _Progress()
        self._dim: int | None = None
        self._retry_s = RETRY_S

    @property
    def model(self) -> str:
        return self._embedder.model

    def wake(self) -> None:
        """Tell the embedder that documents changed; never blocks, never fails."""
        try:
            self._wake_send.send_nowait(None)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # a wake-up is already pending, or the task is gone

    def status(self) -> EmbeddingStatus:
        p = self._progress
        return EmbeddingStatus(
            self.model,
            self._embedder.base_url,
            self._dim,
            p.state,
            p.total,
            p.embedded,
            p.refused,
            p.vectors,
            self._embedder.last_error,
            self._vectors.memory_bytes(),
        )

    # -- the search side ---------------------------------------------------------------

    async def nearest(self, query: str, journals: Collection[str] | None, limit: int) -> SemanticHits:
        """The chunks nearest ``query`` in meaning, or why none were asked (within QUERY_S)."""
        if self._progress.state == "stopped":
            return SemanticHits([], "semantic recall is off (the vectors file failed; see the server log)")
        if self._dim is None:
            return SemanticHits([], "semantic recall skipped: nothing is embedded yet")
        with trio.move_on_after(QUERY_S):
            try:
                vector = await self._embedder.query(query)
            except LLMError as exc:
                return SemanticHits([], f"semantic recall skipped: the embedding endpoint failed ({exc})")
            if len(vector) != self._dim:
                return SemanticHits([], "semantic recall skipped: the embedding model changed; re-embedding")
            try:
                found = await trio.to_thread.run_sync(
                    lambda: self._vectors.nearest(self.model, vector, journals=journals, limit=limit)
                )
            except StoreError as exc:
                return SemanticHits([], f"semantic recall skipped: {exc}")
            return SemanticHits(found)
        return SemanticHits([], f"semantic recall skipped: the embedding endpoint did not answer within {QUERY_S:g} s")

    # -- the background task ------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep the vectors up to date until cancelled (see the module docstring)."""
        try:
            await trio.to_thread.run_sync(self._vectors.open)
            dims = await trio.to_thread.run_sync(self._vectors.dimensions, self.model)
            self._dim = dims[0] if len(dims) == 1 else None
        except StoreError as exc:
            log.error("semantic recall is off: %s", exc)
            self._progress.state = "stopped"
            task_status.started()
            return
        task_status.started()
        try:
            while True:
                try:
                    busy = await self._pass()
                except StoreError as exc:
                    log.error("semantic recall stops: %s", exc)
                    self._progress.state = "stopped"
                    return
                if not busy:
                    with trio.move_on_after(POLL_S):
                        await self._wake_recv.receive()
        finally:
            self._wake_recv.close()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._vectors.close)

    async def _pass(self) -> bool:
        """One look at the catalog; True if it embedded (or tried to) anything."""
        await self._repo.refresh()
        journals = dict(self._repo.current_journals())
        await trio.to_thread.run_sync(self._vectors.drop_except, self.model, self._dim, set(journals))
        done = await trio.to_thread.run_sync(self._vectors.done, self.model, self._dim) if self._dim else {}
        await self._count(journals, done)
        todo = sorted(
            ((j, e) for j, e in journals.items() if len(done.get(j, ())) < e.info.chunks),
            key=lambda pair: pair[1].info.ingested_at,
        )
        if not todo:
            self._progress.state = "caught up"
            return False
        self._progress.state = "embedding"
        for journal, entry in todo:
            dim = self._dim
            if not await self._embed_document(journal, entry, done.get(journal, set())) or self._dim != dim:
                return True  # the endpoint failed (waited already) or the model changed: look again
        return True

    async def _count(self, journals: dict[str, DocEntry], done: dict[str, set[str]]) -> None:
        p = self._progress
        p.total = sum(entry.info.chunks for entry in journals.values())
        if self._dim is not None:
            p.embedded, p.refused, p.vectors = await trio.to_thread.run_sync(
                self._vectors.counts, self.model, self._dim
            )
        else:
            p.embedded = p.refused = p.vectors = 0

    async def _embed_document(self, journal: str, entry: DocEntry, done: set[str]) -> bool:
        """Embed the chunks of one generation not in ``done``; False when the endpoint failed."""
        path, store, start = self._repo.gen_path(entry.doc_id, entry.gen), self._repo.store, 0
        while True:
            # One block (4 MB) at a time; the generator is dropped, and its file closed, each time.
            block = await trio.to_thread.run_sync(lambda: next(iter(store.blocking.read_blocks(path, start)), None))
            if block is None or not block.records:
                return True
            start = block.end
            batch: list[tuple[StoredChunk, int, int, list[Part]]] = []
            for record in block.records:
                chunk = chunk_on_line(record.data)
                if chunk is None or str(chunk.index) in done:
                    continue
                batch.append((chunk, record.offset, record.end, chunk_parts(chunk)))
                if sum(len(parts) for *_, parts in batch) >= BATCH_PARTS:
                    if not await self._embed_batch(journal, batch):
                        return False
                    batch = []
            if batch and not await self._embed_batch(journal, batch):
                return False

    async def _embed_batch(self, journal: str, batch: list[tuple[StoredChunk, int, int, list[Part]]]) -> bool:
        """One request for ``batch``; on a refusal, chunk by chunk. False when the endpoint failed."""
        texts = [part.text for *_, parts in batch for part in parts]
        try:
            vectors = await self._embedder.documents(texts)
        except LLMResponseError as exc:
            if len(batch) > 1:
                for one in batch:
                    if not await self._embed_batch(journal, [one]):
                        return False
                return True
            if not await self._probe():
                return await self._wait_for_endpoint(exc)
            chunk, start, end, _ = batch[0]
            log.warning("embedding endpoint refuses chunk %s of %s: %s", chunk.index, journal, exc)
            await self._store(journal, [VectorRow(journal, str(chunk.index), -1, start, end, None)], self._dim or 0)
            self._progress.refused += 1
            return True
        except LLMError as exc:
            return await self._wait_for_endpoint(exc)
        self._retry_s = RETRY_S
        dim = len(vectors[0])
        if dim != self._dim:
            if self._dim is not None:  # the pass restarts once this document is done
                log.warning(
                    "embedding model %s now answers %d dimensions, not %d: re-embedding", self.model, dim, self._dim
                )
            self._dim = dim
        rows: list[VectorRow] = []
        position = 0
        for chunk, start, end, parts in batch:
            for number, part in enumerate(parts):
                rows.append(
                    VectorRow(journal, str(chunk.index), number, start, end, vectors[position], (part.start, part.end))
                )
                position += 1
        await self._store(journal, rows, dim)
        self._progress.embedded += len(batch)
        self._progress.vectors += len(rows)
        return True

    async def _store(self, journal: str, rows: list[VectorRow], dim: int) -> None:
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
        log.info("embedding paused for %g s: %s", self._retry_s, exc)
        await trio.sleep(self._retry_s)
        self._retry_s = min(self._retry_s * 2, RETRY_MAX_S)
        return False
