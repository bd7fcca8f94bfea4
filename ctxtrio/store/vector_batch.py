"""One batch of items into a vectors file, and how a background embedder waits when that fails.

:meth:`BatchEmbedder._embed` takes a batch of items (each cut into parts), asks the file
which of their exact inputs it holds a vector of (:meth:`~.vectors.VectorStore.known`),
sends one request for the others (each distinct text once), and stores the rows of whole
items in one transaction. :class:`~.vector_task.VectorTask` (the loop around it) and its
two subclasses build on it. When a batch fails:

* the endpoint unreachable or too slow (LLMUnavailableError, LLMTimeoutError): the task
  waits (RETRY_S, doubling to RETRY_MAX_S) and the pass starts again;
* a batch refused (LLMResponseError): item by item; an item refused alone while a
  one-word probe is answered, part by part: the parts taken are stored and found as any
  item's, and a row of part -1 marks the item refused (done for good) when a part was
  refused (a chunk of a psql table refused whole lost its prose, about half of its text:
  :meth:`BatchEmbedder._part_by_part`); when the probe fails too, the endpoint is treated as down (an input refused with HTTP
  400, 413 or 422, or with 500 twice around the client's own one-word probe, which was
  embedded, leaves the embedder's breaker closed, so the items and the probe go out:
  ``llm/_wire.InputRefusedError``; another 5xx, or a 500 to the one word too, opens it, and
  the task waits);
* no room on the disk for more vectors (DiskFullError: the journals come first): the task
  waits as for the endpoint, and goes on once there is room;
* the vectors file locked by another process past its busy timeout (VectorsBusyError, "database
  is locked": a second server on the data dir writing, ``ctxtrio doctor``): the task waits as for
  the endpoint, and goes on.

The embedder is any object with ``model``, ``base_url``, ``last_error``, ``document_input``,
``documents`` and ``query`` (``llm/embeddings.Embedder``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import trio

from .._errors import LLMError, LLMResponseError
from ..text.embedding import Part
from .reading import DiskFullError
from .room import has_room
from .vector_schema import VectorsBusyError, text_digest
from .vectors import VectorRow, VectorStore

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["RETRY_MAX_S", "RETRY_S", "WAITING_FOR_LOCK", "WAITING_FOR_ROOM", "BatchEmbedder", "Embeds", "Pending"]

log = logging.getLogger("ctxtrio.embeddings")

#: The state of a task whose last write found no room on the disk (:meth:`BatchEmbedder._wait_for_room`).
WAITING_FOR_ROOM = "waiting for room on the disk"
#: The state of a task that found the vectors file locked by another process too long (:meth:`BatchEmbedder._wait_out`).
WAITING_FOR_LOCK = "waiting for another process's lock on the vectors file"
RETRY_S = 1.0
RETRY_MAX_S = 30.0


class Embeds(Protocol):
    """The embedding endpoint as the tasks use it (``llm/embeddings.Embedder``)."""

    model: str
    last_error: str | None

    @property
    def base_url(self) -> str: ...

    def document_input(self, text: str) -> str: ...

    async def documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def query(self, text: str) -> list[float]: ...


@dataclass(frozen=True, slots=True)
class Pending:
    """One item to embed: its key in ``journal``, where it is (a chunk's journal line; 0, 0 else), and its parts."""

    item: str
    line_start: int
    line_end: int
    parts: list[Part]


class BatchEmbedder:
    """Batches of items into one vectors file, with the waits when the endpoint, the disk or a lock fails one."""

    def __init__(self, embedder: Embeds, vectors: VectorStore, what: str) -> None:
        self._embedder = embedder
        self._vectors = vectors
        self._what = what
        self._retry_s = RETRY_S
        self._room_wait_s = RETRY_S
        #: Vector length: from the vectors file at start, then from each answer (None until known).
        self._dim: int | None = None
        #: ``vector_task.OPENING``, "starting", "embedding", "caught up", "endpoint unreachable", WAITING_FOR_ROOM,
        #: WAITING_FOR_LOCK or "stopped".
        self.state = "starting"

    @property
    def model(self) -> str:
        return self._embedder.model

    def _embedded(self, journal: str, items: int, vectors: int, *, refused: bool = False) -> None:
        """Called after ``items`` of ``journal`` were stored with ``vectors`` vectors; ``refused``: marked refused
        (in whole, ``vectors`` 0, or in part)."""

    async def _embed(self, journal: str, batch: list[Pending]) -> bool:
        """Store ``batch``'s vectors, asking one request for the texts the file lacks (:meth:`VectorStore.known
        <.vectors.VectorStore.known>`); on a refusal, item by item. False when the endpoint failed (waited
        already), or an item was not stored because a text held lost its vector meanwhile (look again)."""
        digests = [[text_digest(self._embedder.document_input(part.text)) for part in one.parts] for one in batch]
        held: set[bytes] = set()
        if self._dim is not None:
            wanted = [
                (one.item, number, (part.start, part.end), digest)
                for one, texts in zip(batch, digests, strict=True)
                for number, (part, digest) in enumerate(zip(one.parts, texts, strict=True))
            ]
            held = await trio.to_thread.run_sync(self._vectors.known, self.model, self._dim, journal, wanted)
        send: dict[bytes, str] = {}  # one input per text, however often the batch holds it
        for one, texts in zip(batch, digests, strict=True):
            for part, digest in zip(one.parts, texts, strict=True):
                if digest not in held:
                    send.setdefault(digest, part.text)
        got: dict[bytes, list[float]] = {}
        if send:
            try:
                vectors = await self._embedder.documents(list(send.values()))
            except LLMResponseError as exc:
                return await self._refused(journal, batch, exc, held, set(send))
            except LLMError as exc:
                return await self._wait_for_endpoint(exc)
            got = dict(zip(send, vectors, strict=True))
            self._answered(vectors[0])
        rows = [
            VectorRow(
                journal, one.item, number, one.line_start, one.line_end, got.get(digest), (part.start, part.end), digest
            )
            for one, texts in zip(batch, digests, strict=True)
            for number, (part, digest) in enumerate(zip(one.parts, texts, strict=True))
        ]
        assert self._dim is not None  # (known from the file, or from the answer just stored)
        items, stored = await self._store(rows, self._dim)
        self._embedded(journal, items, stored)
        # An item lost (a text evicted by another process, or held under the dimension before the
        # answer's): False, so a caller that marks its source seen (memory/semantic's journal stamps)
        # looks at it again, and the next pass sends that text.
        return items == len(batch)

    def _answered(self, vector: Sequence[float]) -> None:
        """An answer came: the endpoint works (waits start at RETRY_S again), and its vectors are this long."""
        self._retry_s = RETRY_S
        dim = len(vector)
        if dim != self._dim:
            if self._dim is not None:  # the pass starts again once this batch is stored
                log.warning("embedding model %s now answers %d dimensions, not %d", self.model, dim, self._dim)
            self._dim = dim

    async def _refused(
        self, journal: str, batch: list[Pending], exc: LLMResponseError, held: set[bytes], sent: set[bytes]
    ) -> bool:
        """A batch the endpoint refused: item by item; an item refused alone while a probe is answered,
        part by part (:meth:`_part_by_part`). False when the endpoint failed (waited already)."""
        if len(batch) > 1:
            for one in batch:
                if not await self._embed(journal, [one]):
                    return False
            return True
        if not await self._probe():
            return await self._wait_for_endpoint(exc)
        return await self._part_by_part(journal, batch[0], exc, held, sent)

    async def _part_by_part(
        self, journal: str, one: Pending, exc: LLMResponseError, held: set[bytes], sent: set[bytes]
    ) -> bool:
        """An item refused alone while the probe is answered: each of its texts the file lacks is sent alone
        (``sent``, the texts of the request refused, is one: that one is refused). The parts taken are stored,
        and found as any item's; when one was refused while the probe is still answered after it, a row of
        part -1 marks the item refused for good, until ``doctor --repair`` (:meth:`VectorStore.forget_refused
        <.vectors.VectorStore.forget_refused>`) forgets it and its parts. False when the endpoint failed (waited
        already; nothing stored), or a text held was lost meanwhile (as :meth:`_embed`)."""
        digests = [text_digest(self._embedder.document_input(part.text)) for part in one.parts]
        got: dict[bytes, list[float]] = {}
        refused = set(sent) if len(sent) == 1 else set()
        asked = len(refused)
        for part, digest in zip(one.parts, digests, strict=True):
            if digest in held or digest in got or digest in refused:
                continue
            try:
                (vector,) = await self._embedder.documents([part.text])
            except LLMResponseError as error:
                refused.add(digest)
                exc = error
                continue
            except LLMError as error:
                return await self._wait_for_endpoint(error)
            got[digest] = vector
            self._answered(vector)
        if len(refused) > asked and not await self._probe():  # a server that failed meanwhile refuses nothing
            return await self._wait_for_endpoint(exc)
        rows = [
            VectorRow(
                journal, one.item, number, one.line_start, one.line_end, got.get(digest), (part.start, part.end), digest
            )
            for number, (part, digest) in enumerate(zip(one.parts, digests, strict=True))
            if digest not in refused
        ]
        if refused:
            parts = sum(digest in refused for digest in digests)
            log.warning(
                "embedding endpoint refuses %s %s of %s (%d of its %d part(s); any other is embedded): %s",
                self._what, one.item, journal, parts, len(one.parts), exc,
            )  # fmt: skip
            rows.append(VectorRow(journal, one.item, -1, one.line_start, one.line_end, None))
        items, stored = await self._store(rows, self._dim or 0)
        self._embedded(journal, items, stored, refused=bool(refused))
        return items == 1

    async def _store(self, rows: list[VectorRow], dim: int) -> tuple[int, int]:
        """(items, rows) stored (:meth:`VectorStore.add <.vectors.VectorStore.add>`)."""
        # Shielded: a vector the endpoint already computed is kept even if shutdown is underway.
        with trio.CancelScope(shield=True):
            stored = await trio.to_thread.run_sync(self._vectors.add, self.model, dim, rows)
        self._room_wait_s = RETRY_S
        return stored

    async def _probe(self) -> bool:
        try:
            await self._embedder.documents(["probe"])
        except LLMError:
            return False
        return True

    async def _wait_for_room(self, exc: DiskFullError) -> None:
        """The disk has no room for more vectors (the journals come first): embedding pauses until
        the disk keeps :data:`~.room.ROOM_KEPT_BYTES` free, looked at after RETRY_S, doubling to
        RETRY_MAX_S (until a store succeeds: the endpoint is not asked again each RETRY_S)."""
        if self.state != WAITING_FOR_ROOM:
            log.warning("embedding of %s paused until the disk has room: %s", self._what, exc)
        self.state = WAITING_FOR_ROOM
        while True:
            await trio.sleep(self._room_wait_s)
            self._room_wait_s = min(self._room_wait_s * 2, RETRY_MAX_S)
            if await trio.to_thread.run_sync(has_room, self._vectors.path.parent, 0):
                return

    async def _wait_out(self, exc: DiskFullError | VectorsBusyError) -> None:
        """Wait for what ``exc`` lacks: room on the disk, or another process's lock on the vectors
        file gone (waited as for the endpoint; what was stored stays), then the pass starts again."""
        if isinstance(exc, DiskFullError):
            await self._wait_for_room(exc)
        else:
            await self._back_off(WAITING_FOR_LOCK, exc)

    async def _wait_for_endpoint(self, exc: LLMError) -> bool:
        await self._back_off("endpoint unreachable", exc)
        return False

    async def _back_off(self, state: str, exc: Exception) -> None:
        """Say ``state``, wait RETRY_S, doubling to RETRY_MAX_S until a store succeeds."""
        self.state = state
        log.info("embedding of %s paused for %g s: %s", self._what, self._retry_s, exc)
        await trio.sleep(self._retry_s)
        self._retry_s = min(self._retry_s * 2, RETRY_MAX_S)
