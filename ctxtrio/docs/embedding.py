"""Semantic recall (``--embed-model``): the background embedder and the vector side of a search.

:class:`SemanticIndex` owns one background task, :meth:`SemanticIndex.run`, started in
``_wiring.py``'s background nursery::

    wait for a wake-up (an ingest or forget committed) or POLL_S
    refresh the catalog; drop rows of documents gone or replaced, or of another model
    for each current document (newest ingest first) with chunks not embedded yet:
        read its generation file block by block (4 MB), cut each missing chunk into parts
        for BATCH_PARTS parts: ask the vectors file which texts it holds (an unchanged chunk
        of a document edited and ingested again: all), and one request for the rest, the
        client's embed_timeout_s, through the breaker
        store the rows of whole chunks in one transaction; the catalog changed meanwhile
        (any process ingested or forgot): the pass reads the rows of the documents changed
        since, drops those of the ones replaced or forgotten by their journal (their counts
        go with them), then takes the newest document again, else the next batch
    every chunk embedded: bound the texts no row names (VectorStore.collect)

Newest first, and looked at again after every batch, because the document a model just
ingested is the one it searches next: a backlog of hours (a corpus ingested at once, on a
CPU-only embedder) made a document ingested later wait for all of it, and an edited file
ingested again lost search by meaning that long, though most of its texts' vectors were
held (stress/embed_lag.py). Documents ingested together are embedded in reverse; the
backlog as a whole takes as long as before.

What is done lives only in the vectors file, so the task resumes after a restart where
it stopped, catches up documents ingested before ``--embed-model`` was set, and embeds
nothing twice. Ingest acknowledgements never wait for it: a commit only wakes it
(a send that never blocks on a one-slot channel). The backlog is the catalog itself, so
the queue in memory is bounded by one document's block.

The loop, the pauses and refusals below are :class:`~ctxtrio.store.vector_task.VectorTask`'s,
shared with session entries' embedder (``memory/semantic.py``).
When the endpoint is unreachable or too slow (LLMUnavailableError, LLMTimeoutError)
the task waits (RETRY_S, doubling to RETRY_MAX_S) and starts the pass again; searches
meanwhile answer from BM25 and say so. A chunk the endpoint refuses alone (an
LLMResponseError while a one-word probe is answered) is sent again part by part: the parts
taken are embedded, and the chunk is recorded as refused and skipped
until ``ctxtrio doctor --repair`` forgets the refusals (``VectorStore.forget_refused``);
when the probe fails too, the endpoint is treated as down. A broken vectors
file (StoreError) stops semantic recall, logged, and never the server. Cancelling the
task closes the vectors file.

Each chunk is embedded in parts of at most PART_CHARS characters and of the model's
window in word pieces (``text/wordpiece.py``; an embedding model
reads a few hundred tokens: all-MiniLM-L6-v2 256, trained on 128), each part prefixed
with the chunk's heading trail and stored with the characters of the chunk it holds; a
chunk matches by its best part, and a search can show that part (``docs/hybrid.py``).
After its passages come its entries' leads (``text/leads.py``): an API entry's name with
its first sentence, a title with the first sentence under it, each holding the characters
from its line to that sentence's end, so a hit found by one shows that sentence.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import trio

from ..store.layout import removed_for_good
from ..store.vector_batch import Pending
from ..store.vector_task import RETRY_REFUSED, VectorTask
from ..store.vectors import Tally, VectorHit
from ..text.embedding import PART_CHARS, Part, text_parts
from ..text.leads import entry_leads
from ..text.plural import plural
from .chunks import chunk_on_line

if TYPE_CHECKING:
    from collections.abc import Collection

    from ..llm.embeddings import Embedder
    from ..store.vectors import VectorStore
    from .catalog import DocEntry
    from .chunks import StoredChunk
    from .repository import Repository

__all__ = ["PART_CHARS", "EmbeddingStatus", "Part", "SemanticIndex", "chunk_parts", "describe_semantic"]

BATCH_PARTS = 16
#: How :meth:`SemanticIndex._embed_document` ended.
Ended = Literal["embedded", "moved", "failed"]


def chunk_parts(chunk: StoredChunk) -> list[Part]:
    """The parts a chunk is embedded as: its passages (:func:`~ctxtrio.text.embedding.text_parts`),
    then its entries' leads (:func:`~ctxtrio.text.leads.entry_leads`), each led by its heading trail."""
    return text_parts(chunk.text, chunk.trail) + entry_leads(chunk.text, chunk.trail)


@dataclass(frozen=True, slots=True)
class EmbeddingStatus:
    """What ``context_status``, ``context_guide`` and ``ctxtrio doctor`` say about semantic recall."""

    model: str
    base_url: str
    #: Vector length; None until the endpoint first answered (or vectors were found).
    dimension: int | None
    #: "opening the vectors file", "starting", "embedding", "caught up", "endpoint unreachable", "waiting for room
    #: on the disk", "waiting for another process's lock on the vectors file", "stopped".
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
    done = f"{status.chunks_embedded:,} of {plural(status.chunks_total, 'chunk')} embedded"
    if status.chunks_refused:
        done += f", {status.chunks_refused} refused by the endpoint"
    state = status.state
    if status.last_error and not status.working:
        state += f" ({status.last_error})"
    retry = f"; {RETRY_REFUSED}" if status.chunks_refused else ""
    return f"semantic recall: {status.model} at {status.base_url}, {dim}; {done}; {state}{retry}"


@dataclass(frozen=True, slots=True)
class SemanticHits:
    """The vector ranking of one search, or why there is none (``skipped``)."""

    hits: list[VectorHit]
    skipped: str | None = None


@dataclass(slots=True)
class _Progress:
    total: int = 0
    embedded: int = 0
    refused: int = 0
    vectors: int = 0


class SemanticIndex(VectorTask):
    """Chunk vectors for one embedding model: kept up to date in the background, asked by searches."""

    def __init__(self, repo: Repository, embedder: Embedder, vectors: VectorStore) -> None:
        super().__init__(embedder, vectors, "chunks")
        self._repo = repo
        self._progress = _Progress()
        #: Journal -> (embedded, refused, vectors): its share of ``_progress``, as this pass counted it.
        self._counted: dict[str, tuple[int, int, int]] = {}
        #: (catalog version, dimension) when every chunk was last found embedded.
        self._caught_up_at: tuple[int, int | None] | None = None

    def status(self) -> EmbeddingStatus:
        p = self._progress
        return EmbeddingStatus(
            self.model,
            self._embedder.base_url,
            self._dim,
            self.state,
            p.total,
            p.embedded,
            p.refused,
            p.vectors,
            self._embedder.last_error,
            self._vectors.memory_bytes(),
        )

    async def nearest(self, query: str, journals: Collection[str] | None, limit: int) -> SemanticHits:
        """The chunks nearest ``query`` in meaning, or why none were asked (within QUERY_S)."""
        hits, skipped = await self._nearest(query, journals, limit)
        return SemanticHits(hits, skipped)

    def _embedded(self, journal: str, items: int, vectors: int, *, refused: bool = False) -> None:
        # (refused in part too: counted as VectorStore.counts counts it)
        self._count_in(journal, 0 if refused else items, items if refused else 0, vectors)

    def _count_in(self, journal: str, embedded: int, refused: int, vectors: int) -> None:
        """Add to the counts ``context_status`` gives, and to ``journal``'s share of them (taken away when it goes)."""
        p, had = self._progress, self._counted.get(journal, (0, 0, 0))
        self._counted[journal] = (had[0] + embedded, had[1] + refused, had[2] + vectors)
        p.embedded, p.refused, p.vectors = p.embedded + embedded, p.refused + refused, p.vectors + vectors

    async def _pass(self) -> bool:
        """One look at the catalog; True if it embedded (or tried to) anything."""
        await self._repo.refresh()
        seen = (self._repo.state.version, self._dim)
        forgotten = await self._refusals_forgotten()
        if self.state == "caught up" and seen == self._caught_up_at and not forgotten:
            return False  # the catalog as it was when every chunk was embedded: no write, no count
        journals = dict(self._repo.current_journals())
        await self._drop_except(set(journals), removed_for_good(journals))
        done = await self._count(journals)
        version = seen[0]
        while True:
            todo = sorted(
                ((j, e) for j, e in journals.items() if len(done.get(j, ())) < e.info.chunks),
                key=lambda pair: pair[1].info.ingested_at,
                reverse=True,
            )
            if not todo:
                if version == seen[0]:
                    await self._tidy()
                    self.state = "caught up"
                    self._caught_up_at = seen
                    return False
                return True  # (moved meanwhile: the next pass looks at every document before saying caught up)
            self.state = "embedding"
            for journal, entry in todo:
                dim = self._dim
                ended = await self._embed_document(journal, entry, done.setdefault(journal, set()), version)
                if ended == "failed" or self._dim != dim:
                    return True  # the endpoint failed (waited already) or the model changed: look again
                if ended == "moved":
                    break
            else:
                return True
            if await self._refusals_forgotten():
                return True  # doctor --repair forgot refusals: items the pass holds done may be gone
            version = await self._moved(version, journals, done)

    async def _moved(self, version: int, journals: dict[str, DocEntry], done: dict[str, set[str]]) -> int:
        """The catalog moved past ``version`` during a pass: bring the pass's ``journals`` and ``done`` (kept
        as batches land) up to the catalog's version, reading the rows of the documents changed since, not
        every row: a bulk ingest moves it after nearly every batch, and each full read of the vectors file
        held the lock a search's scan waits for (1.4 s at 600,000 rows). The rows of a document replaced or
        forgotten go by their journal (:meth:`VectorStore.drop_journals <ctxtrio.store.vectors.VectorStore.
        drop_journals>`), and the counts lose what this pass counted of it; a new document's rows, however
        many another process stored, are counted as the file holds them (embedded, refused, vectors). The
        catalog's version now."""
        now = dict(self._repo.current_journals())
        gone = set(journals) - set(now)
        fresh = {
            self._repo.journal(e)
            for d in self._repo.state.changed_since(version)
            if (e := self._repo.state.docs.get(d)) is not None
        }
        journals.clear()
        journals.update(now)
        for journal in gone:
            done.pop(journal, None)
        # Their counts go before their rows: context_status, read while the drop runs in its thread, then says no
        # more than the file holds (after, it said 10 embedded while the file held 8: a flaky CI run of
        # tests/docs/test_embedding_moves.py). A drop that fails leaves rows the next pass's full count finds.
        for journal in gone:
            embedded, refused, vectors = self._counted.get(journal, (0, 0, 0))
            self._count_in(journal, -embedded, -refused, -vectors)
            del self._counted[journal]
        if gone and self._dim is not None:
            drop = functools.partial(self._vectors.drop_journals, forgotten=removed_for_good(now))
            if await trio.to_thread.run_sync(drop, self.model, self._dim, sorted(gone)):
                self._untidy = True
        for journal in sorted(fresh - set(done)):
            if self._dim is not None:
                read = functools.partial(self._vectors.tally, self.model, self._dim, journal=journal)
                tally = (await trio.to_thread.run_sync(read)).get(journal, Tally())
                done[journal] = tally.items
                self._count_in(journal, tally.embedded, tally.refused, tally.vectors)
        self._progress.total = sum(entry.info.chunks for entry in journals.values())
        return self._repo.state.version

    async def _count(self, journals: dict[str, DocEntry]) -> dict[str, set[str]]:
        """What the vectors file holds of every journal (the pass's ``done``: journal -> items with rows), and the
        counts ``context_status`` gives, in one walk of its rows (:meth:`VectorStore.tally
        <ctxtrio.store.vectors.VectorStore.tally>`)."""
        self._progress = _Progress(total=sum(entry.info.chunks for entry in journals.values()))
        self._counted = {}
        if self._dim is None:
            return {}
        tallies = await trio.to_thread.run_sync(self._vectors.tally, self.model, self._dim)
        for journal, tally in tallies.items():
            self._count_in(journal, tally.embedded, tally.refused, tally.vectors)
        return {journal: tally.items for journal, tally in tallies.items()}

    async def _embed_document(self, journal: str, entry: DocEntry, done: set[str], version: int) -> Ended:
        """Embed the chunks of one generation not in ``done``, adding each batch stored to it: "failed" when
        the endpoint failed (or an item was lost), "moved" when the catalog moved past ``version`` (the pass's)
        after a batch: a newer document may wait."""
        path, store, start = self._repo.gen_path(entry.doc_id, entry.gen), self._repo.store, 0
        while True:
            # One block (4 MB) at a time; the generator is dropped, and its file closed, each time.
            block = await trio.to_thread.run_sync(lambda: next(iter(store.blocking.read_blocks(path, start)), None))
            if block is None or not block.records:
                return "embedded"
            start = block.end
            batch: list[Pending] = []
            for record in block.records:
                chunk = chunk_on_line(record.data)
                if chunk is None or str(chunk.index) in done:
                    continue
                batch.append(Pending(str(chunk.index), record.offset, record.end, chunk_parts(chunk)))
                if sum(len(one.parts) for one in batch) >= BATCH_PARTS:
                    if (ended := await self._embed_batch(journal, batch, done, version)) != "embedded":
                        return ended
                    batch = []
            if batch and (ended := await self._embed_batch(journal, batch, done, version)) != "embedded":
                return ended

    async def _embed_batch(self, journal: str, batch: list[Pending], done: set[str], version: int) -> Ended:
        if not await self._embed(journal, batch):
            return "failed"
        done.update(one.item for one in batch)
        return "moved" if await self._catalog_moved(version) else "embedded"

    async def _catalog_moved(self, version: int) -> bool:
        """Whether a document was ingested or forgotten (by any process) since the catalog's ``version``."""
        await self._repo.refresh()
        return self._repo.state.version != version
