"""One ingest: chunk in worker threads, append a new generation, commit it in the catalog.

::

    producer task ──(channel, 1 batch)──▶ this task
      worker thread (or, for large texts,   store.append(docs/<doc>/<gen>.jsonl, batch, rows)
      a child process): next BATCH_CHUNKS   progress(done_chars, total_chars)
      chunks + search terms + records
                                            ...
                                            catalog commit (the atomic switch)

The producer computes the next batch while the store writer writes the previous one,
and every batch is a separate worker-thread call and a separate append, so the event
loop and the single writer both stay free for other calls during a large ingest. A
text whose first batch is its last (fewer than :data:`BATCH_CHUNKS` chunks: nearly every
text chunked in threads) needs no producer. The last batch travels with the commit: one
operation of the store writer appends it and then the commit, naming where the
generation ends, fsynced in one round
(:meth:`~ctxtrio.store.handle.StoreHandle.append_then`), so a document of one batch
costs one writer round trip and one wait for the disk. What makes the commit safe: it
is written after every chunk (a process that reads it finds them), and a commit whose
file does not reach the end it names (a crash in that round) is skipped by every replay
(:func:`~.catalog.unlanded`), so the version before it stays.

If anything fails or the call is cancelled before the commit, the new generation
file is removed (shielded, bounded by :data:`CLEANUP_DEADLINE_S`) and the previous
version stays current. A commit the store did not confirm in time
(:class:`~.repository.CommitTimeoutError`) keeps the file: the commit may still land.
A crash leaves an uncommitted file that the next startup
sweep removes (:mod:`.repository`).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from .._errors import CtxError, StoreError
from .._nursery import open_nursery
from .._progress import Progress
from ..text.kinds import Kind
from .chunks import Batch, ChunkBatcher, LoadedDoc, StoredChunk
from .exact import exact_batch, exact_model
from .model import DocumentInfo
from .offload import OFFLOAD_MIN_CHARS, produce_in_child
from .repository import CommitTimeoutError, Repository

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .._live import TokenCounting
    from ..text.tokens import TokenModel
    from .pool import ChunkPool

    #: Sends a text's batches to the channel given, then closes it.
    Producer = Callable[[trio.MemorySendChannel[Batch]], Awaitable[None]]

__all__ = [
    "BATCH_CHUNKS",
    "CLEANUP_DEADLINE_S",
    "INLINE_CHUNK_CHARS",
    "Source",
    "content_hash",
    "text_digest",
    "write_generation",
]

log = logging.getLogger("ctxtrio.docs")

#: Chunks per worker-thread call and per append (a few hundred: other producers interleave).
BATCH_CHUNKS = 256
CLEANUP_DEADLINE_S = 5.0
#: Shorter texts are chunked on the event loop, which that holds ~0.2-0.3 ms (stdlib files
#: under 2,000 characters: 0.17-0.26 ms each); a worker-thread hop would cost ~0.18 ms of
#: CPU on its own (0.13 ms of it on the event loop).
INLINE_CHUNK_CHARS = 2_000
#: Shorter texts are hashed on the event loop (a few hundred microseconds at most).
_HASH_INLINE_CHARS = 256_000


@dataclass(frozen=True, slots=True)
class Source:
    """What to ingest, already read and checked."""

    doc_id: str
    title: str
    source: str
    text: str
    content_hash: str = ""
    #: How the text is split (from its file's or title's extension, else its content).
    kind: Kind = Kind.MARKDOWN


async def write_generation(
    repo: Repository,
    source: Source,
    *,
    chunk_tokens: int,
    overlap_tokens: int,
    model: TokenModel,
    progress: Progress | None = None,
    cpu: trio.CapacityLimiter | None = None,
    offload_min_chars: int = OFFLOAD_MIN_CHARS,
    pool: ChunkPool | None = None,
    exact: TokenCounting | None = None,
) -> tuple[DocumentInfo, bool]:
    """Write and commit a new generation of ``source.doc_id``; returns the committed info, and
    whether the commit replaced a current version (as the catalog orders it among concurrent
    ingests of the document: what was current before they began says nothing of that).

    Texts of ``offload_min_chars`` or more are chunked in a child process: one of
    ``pool`` (:mod:`.pool`), or without a pool one of their own (:mod:`.offload`);
    shorter ones in worker threads (at most ``cpu`` at once). ``exact`` (a counter
    whose counts are exact) sizes and checks the chunks by exact counts (:mod:`.exact`).
    """
    if exact is not None:
        model = await exact_model(model, source.text, exact)
    gen = secrets.token_hex(8)
    path = repo.gen_path(source.doc_id, gen)  # the store makes the folder with the first append
    written = _Written(repo, path, len(source.text), progress)
    keep = False  # the generation file, once the commit is (or may be) in the catalog
    try:
        if len(source.text) >= offload_min_chars:
            produce = partial(
                produce_in_child if pool is None else pool.produce,
                source.text,
                chunk_tokens=chunk_tokens,
                overlap_tokens=overlap_tokens,
                model=model,
                batch_size=BATCH_CHUNKS,
                kind=source.kind,
            )
            await _stream(written, produce, source.text, model, exact)
        else:
            batcher = ChunkBatcher(
                source.text,
                chunk_tokens=chunk_tokens,
                overlap_tokens=overlap_tokens,
                model=model,
                batch_size=BATCH_CHUNKS,
                kind=source.kind,
            )
            if len(source.text) < INLINE_CHUNK_CHARS:
                first = batcher.next_batch()  # less than a worker-thread hop costs the event loop
            else:
                first = await trio.to_thread.run_sync(batcher.next_batch, limiter=cpu)
            if first is not None and len(first.chunks) < BATCH_CHUNKS:
                # One batch holds the whole text (nearly every text chunked in threads): it goes
                # with the commit, with no producer task and channel between two awaits in a row.
                await written.take(await _exact(first, source.text, model, exact))
            elif first is not None:
                await _stream(written, partial(_produce, batcher, cpu, first), source.text, model, exact)
        chunks, last, end = written.chunks, written.last, written.end
        info = DocumentInfo(
            source.doc_id,
            source.title,
            source.source,
            len(chunks),
            len(source.text),
            sum(chunk.tokens for chunk in chunks),
            time.time(),
            source.content_hash,
        )
        try:
            commit, last_end = await repo.commit(info, gen, None if last is None else (last.records, last.rows))
        except CommitTimeoutError:
            keep = True  # it may land yet: the catalog would then point to this file
            raise
        keep = True
        end = end if last_end is None else last_end
    finally:
        if not keep:
            await _discard(repo, path)
    repo.remember(LoadedDoc(source.doc_id, gen, chunks, {}, end))
    await repo.absorb(commit)  # applies the commit and removes the generation it replaced
    if last is not None and progress is not None:
        await progress(last.done_chars, len(source.text))
    current = repo.state.docs.get(source.doc_id)
    replaced = (source.doc_id, gen) in repo.state.replacing
    return (current.info if current is not None and current.gen == gen else info), replaced


async def content_hash(text: str) -> str:
    """SHA-256 (hex) of the UTF-8 bytes of ``text``; long texts are hashed in a worker thread."""
    if len(text) < _HASH_INLINE_CHARS:
        return text_digest(text)
    return await trio.to_thread.run_sync(text_digest, text)


def text_digest(text: str) -> str:
    """SHA-256 (hex) of the UTF-8 bytes of ``text`` (blocking): a document's ``content_hash``.

    UnicodeEncodeError if ``text`` has no UTF-8 form (an unpaired surrogate): then no journal
    can hold it either, and this pass over the text, made anyway, is where an ingest finds out.
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class _Written:
    """A generation's batches so far: all but the last appended, the last held for the commit."""

    repo: Repository
    path: Path
    total_chars: int
    progress: Progress | None
    chunks: list[StoredChunk] = field(default_factory=list)
    last: Batch | None = None
    #: Where the appended batches end in the generation file.
    end: int = 0

    async def take(self, batch: Batch) -> None:
        """Hold ``batch`` back; append the one held before it (durable on return)."""
        if self.last is not None:
            result = await self.repo.store.append(self.path, self.last.records, rows=self.last.rows)
            self.end = result.end
            if self.progress is not None:
                await self.progress(self.last.done_chars, self.total_chars)
        self.chunks.extend(batch.chunks)
        self.last = batch


async def _stream(
    written: _Written, produce: Producer, text: str, model: TokenModel, exact: TokenCounting | None
) -> None:
    """Take the batches ``produce`` sends, computed while the previous one is appended."""
    send, recv = trio.open_memory_channel[Batch](1)
    errors: list[CtxError] = []  # the producer's or the consumer's, raised as they are
    async with open_nursery() as nursery:
        nursery.start_soon(_guarded, partial(produce, send), errors)
        try:
            async with recv:
                async for batch in recv:
                    await written.take(await _exact(batch, text, model, exact))
        except CtxError as exc:
            errors.insert(0, exc)
            nursery.cancel_scope.cancel()
    if errors:
        raise errors[0]


async def _guarded(produce: Callable[[], Awaitable[None]], errors: list[CtxError]) -> None:
    """Run a producer; keep its domain error for the ingest to raise (not in a group)."""
    try:
        await produce()
    except CtxError as exc:
        errors.append(exc)
    except trio.BrokenResourceError:
        pass  # the consumer stopped first; it raises its own error


async def _exact(batch: Batch, text: str, model: TokenModel, exact: TokenCounting | None) -> Batch:
    """The batch as it is stored: checked by exact counts when there is an exact counter."""
    return batch if exact is None else await exact_batch(batch, text, model, exact)


async def _produce(
    batcher: ChunkBatcher, cpu: trio.CapacityLimiter | None, first: Batch, send: trio.MemorySendChannel[Batch]
) -> None:
    async with send:
        await send.send(first)  # a full batch: more follow
        while (batch := await trio.to_thread.run_sync(batcher.next_batch, limiter=cpu)) is not None:
            await send.send(batch)
            if len(batch.chunks) < BATCH_CHUNKS:
                break  # a short batch is the last: no worker-thread call to learn that


async def _discard(repo: Repository, path: Path) -> None:
    """Remove an uncommitted generation and its index rows; the previous version stays current.

    The rows are forgotten by the writer's next index flush, waited for here: an ingest that
    failed on a full disk reports it only once the room its generation held is free again
    (the index dropped if forgetting them needs room: :func:`~ctxtrio.store.index_flush.flush_index`).
    """
    with trio.CancelScope(shield=True) as scope:
        scope.deadline = trio.current_time() + CLEANUP_DEADLINE_S
        try:
            await repo.store.remove(path)
            await repo.store.index_settled()
        except StoreError as exc:
            log.warning("could not remove uncommitted generation %s (the startup sweep will): %s", path, exc)
