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
text chunked in threads) needs no producer: that batch is appended as it comes.

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
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import trio

from .._errors import CtxError, StoreError
from .._nursery import open_nursery
from ..text.kinds import Kind
from .chunks import Batch, ChunkBatcher, LoadedDoc, StoredChunk
from .exact import exact_batch, exact_model
from .model import DocumentInfo
from .offload import OFFLOAD_MIN_CHARS, produce_in_child
from .repository import CommitTimeoutError, Repository

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable
    from pathlib import Path

    from .._live import TokenCounting
    from .._progress import Progress
    from ..text.tokens import TokenModel
    from .pool import ChunkPool

__all__ = [
    "BATCH_CHUNKS",
    "CLEANUP_DEADLINE_S",
    "CharBudget",
    "Source",
    "content_hash",
    "text_digest",
    "write_generation",
]

log = logging.getLogger("ctxtrio.docs")

#: Chunks per worker-thread call and per append (a few hundred: other producers interleave).
BATCH_CHUNKS = 256
CLEANUP_DEADLINE_S = 5.0
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
) -> DocumentInfo:
    """Write and commit a new generation of ``source.doc_id``; returns the committed info.

    Texts of ``offload_min_chars`` or more are chunked in a child process: one of
    ``pool`` (:mod:`.pool`), or without a pool one of their own (:mod:`.offload`);
    shorter ones in worker threads (at most ``cpu`` at once). ``exact`` (a counter
    whose counts are exact) sizes and checks the chunks by exact counts (:mod:`.exact`).
    """
    if exact is not None:
        model = await exact_model(model, source.text, exact)
    gen = secrets.token_hex(8)
    path = repo.gen_path(source.doc_id, gen)  # the store makes the folder with the first append
    chunks: list[StoredChunk] = []
    end = 0
    keep = False  # the generation file, once the commit is (or may be) in the catalog
    try:
        first: Batch | None = None
        if len(source.text) < offload_min_chars:
            batcher = ChunkBatcher(
                source.text,
                chunk_tokens=chunk_tokens,
                overlap_tokens=overlap_tokens,
                model=model,
                batch_size=BATCH_CHUNKS,
                kind=source.kind,
            )
            first = await trio.to_thread.run_sync(batcher.next_batch, limiter=cpu)
        if first is not None and len(first.chunks) < BATCH_CHUNKS:
            # One batch holds the whole text (nearly every text chunked in threads): append
            # it here, with no producer task and channel between two awaits in a row.
            end = await _append(repo, path, first, source.text, model, exact, progress, chunks)
        elif first is not None or len(source.text) >= offload_min_chars:
            send, recv = trio.open_memory_channel[Batch](1)
            errors: list[CtxError] = []  # the producer's or the consumer's, raised as they are
            produce: Callable[[], Awaitable[None]]
            if first is None:
                produce = partial(
                    produce_in_child if pool is None else pool.produce,
                    source.text,
                    send,
                    chunk_tokens=chunk_tokens,
                    overlap_tokens=overlap_tokens,
                    model=model,
                    batch_size=BATCH_CHUNKS,
                    kind=source.kind,
                )
            else:
                produce = partial(_produce, batcher, send, cpu, first)
            async with open_nursery() as nursery:
                nursery.start_soon(_guarded, produce, errors)
                try:
                    async with recv:
                        async for batch in recv:
                            end = await _append(repo, path, batch, source.text, model, exact, progress, chunks)
                except CtxError as exc:
                    errors.insert(0, exc)
                    nursery.cancel_scope.cancel()
            if errors:
                raise errors[0]
        tokens = sum(chunk.tokens for chunk in chunks)
        info = DocumentInfo(
            source.doc_id,
            source.title,
            source.source,
            len(chunks),
            len(source.text),
            tokens,
            time.time(),
            source.content_hash,
        )
        try:
            commit = await repo.commit(info, gen)
        except CommitTimeoutError:
            keep = True  # it may land yet: the catalog would then point to this file
            raise
        keep = True
    finally:
        if not keep:
            await _discard(repo, path)
    repo.remember(LoadedDoc(source.doc_id, gen, chunks, {}, end))
    await repo.absorb(commit)  # applies the commit and removes the generation it replaced
    current = repo.state.docs.get(source.doc_id)
    return current.info if current is not None and current.gen == gen else info


class CharBudget:
    """A weighted limiter: ingests hold their text's length in characters until they finish.

    An ingest waits while the others in flight hold more than ``total - its size``; one
    larger than the whole budget runs alone. Waiters are woken in no particular order.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.free = total
        self._lot = trio.lowlevel.ParkingLot()

    @asynccontextmanager
    async def hold(self, chars: int) -> AsyncIterator[None]:
        need = max(1, min(chars, self.total))
        while self.free < need:
            await self._lot.park()
        self.free -= need
        try:
            yield
        finally:
            self.free += need
            self._lot.unpark_all()


async def content_hash(text: str) -> str:
    """SHA-256 (hex) of the UTF-8 bytes of ``text``; long texts are hashed in a worker thread."""
    if len(text) < _HASH_INLINE_CHARS:
        return text_digest(text)
    return await trio.to_thread.run_sync(text_digest, text)


def text_digest(text: str) -> str:
    """SHA-256 (hex) of the UTF-8 bytes of ``text`` (blocking): a document's ``content_hash``."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


async def _guarded(produce: Callable[[], Awaitable[None]], errors: list[CtxError]) -> None:
    """Run a producer; keep its domain error for the ingest to raise (not in a group)."""
    try:
        await produce()
    except CtxError as exc:
        errors.append(exc)
    except trio.BrokenResourceError:
        pass  # the consumer stopped first; it raises its own error


async def _append(
    repo: Repository,
    path: Path,
    batch: Batch,
    text: str,
    model: TokenModel,
    exact: TokenCounting | None,
    progress: Progress | None,
    chunks: list[StoredChunk],
) -> int:
    """Append one batch to the generation file (durable on return); its end offset."""
    if exact is not None:
        batch = await exact_batch(batch, text, model, exact)
    result = await repo.store.append(path, batch.records, rows=batch.rows)
    chunks.extend(batch.chunks)
    if progress is not None:
        await progress(batch.done_chars, len(text))
    return result.end


async def _produce(
    batcher: ChunkBatcher, send: trio.MemorySendChannel[Batch], cpu: trio.CapacityLimiter | None, first: Batch
) -> None:
    async with send:
        await send.send(first)  # a full batch: more follow
        while (batch := await trio.to_thread.run_sync(batcher.next_batch, limiter=cpu)) is not None:
            await send.send(batch)
            if len(batch.chunks) < BATCH_CHUNKS:
                break  # a short batch is the last: no worker-thread call to learn that


async def _discard(repo: Repository, path: Path) -> None:
    """Remove an uncommitted generation; the previous version stays current."""
    with trio.CancelScope(shield=True) as scope:
        scope.deadline = trio.current_time() + CLEANUP_DEADLINE_S
        try:
            await repo.store.remove(path)
        except StoreError as exc:
            log.warning("could not remove uncommitted generation %s (the startup sweep will): %s", path, exc)
