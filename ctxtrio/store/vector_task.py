"""What the two background embedders share: chunks' (``docs/embedding.py``) and session entries' (``memory/semantic.py``).

A :class:`VectorTask` keeps one :class:`~.vectors.VectorStore` up to date for one
embedding model: :meth:`VectorTask.run` (started in the background nursery) opens the
file, learns the dimension stored, then repeats the subclass's ``_pass`` until
cancelled, waiting for a wake-up (:meth:`VectorTask.wake`, a send that never blocks on
a one-slot channel) or POLL_S when a pass found nothing to do. :meth:`VectorTask._embed`
takes a batch of items (each cut into parts), asks the file which of their exact inputs
it holds a vector of (:meth:`~.vectors.VectorStore.known`), sends one request for the
others (each distinct text once), and stores the rows of whole items in one transaction.
Rows dropped (:meth:`VectorTask._drop_except`, :meth:`VectorTask._drop_items`) leave
their texts for a while, so an item made again costs nothing; once every item is
embedded, :meth:`VectorTask._tidy` bounds them.

* the endpoint unreachable or too slow (LLMUnavailableError, LLMTimeoutError): the task
  waits (RETRY_S, doubling to RETRY_MAX_S) and the pass starts again;
* a batch refused (LLMResponseError): item by item; an item refused alone while a
  one-word probe is answered, part by part: the parts taken are stored and found as any
  item's, and a row of part -1 marks the item refused (done for good) when a part was
  refused (a chunk of a psql table refused whole lost its prose, about half of its text:
  :meth:`VectorTask._part_by_part`); when the probe fails too, the endpoint is treated as down (an input refused with HTTP
  400, 413 or 422, or with 500 twice around the client's own one-word probe, which was
  embedded, leaves the embedder's breaker closed, so the items and the probe go out:
  ``llm/_wire.InputRefusedError``; another 5xx, or a 500 to the one word too, opens it, and
  the task waits);
* no room on the disk for more vectors (DiskFullError: the journals come first): the task
  waits as for the endpoint, and goes on once there is room;
* the vectors file locked by another process past its busy timeout (VectorsBusyError, "database
  is locked": a second server on the data dir writing, ``ctxtrio doctor``): the task waits as for
  the endpoint, and goes on;
* a broken vectors file (StoreError): this kind of recall stops, logged, never the server.

:meth:`VectorTask._nearest` is the query side: the query's vector within QUERY_S (the
embedder caches it), then the scan. The embedder is any object with ``model``,
``base_url``, ``last_error``, ``document_input``, ``documents`` and ``query``
(``llm/embeddings.Embedder``).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import trio

from .._errors import LLMError, LLMResponseError, StoreError
from ..text.embedding import Part
from .reading import DiskFullError
from .room import has_room
from .vector_schema import VectorsBusyError, text_digest
from .vectors import VectorHit, VectorRow, VectorStore

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

__all__ = ["RETRY_REFUSED", "WAITING_FOR_LOCK", "WAITING_FOR_ROOM", "Embeds", "Pending", "VectorTask"]

log = logging.getLogger("ctxtrio.embeddings")

#: What a status line says after a count of refused items: how to have them sent again (a server whose
#: batch was too small, raised since); a refusal is otherwise kept for good, and never asked again.
RETRY_REFUSED = "refused ones are sent again after ctxtrio doctor --repair"
#: The state of a task whose last write found no room on the disk (:meth:`VectorTask._wait_for_room`).
WAITING_FOR_ROOM = "waiting for room on the disk"
#: The state of a task that found the vectors file locked by another process too long (:meth:`VectorTask._wait_out`).
WAITING_FOR_LOCK = "waiting for another process's lock on the vectors file"
POLL_S = 5.0
RETRY_S = 1.0
RETRY_MAX_S = 30.0
#: How long a search or recall waits for its query's vector before answering from BM25 alone.
QUERY_S = 0.5


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


class VectorTask:
    """A background embedder of one vectors file; subclasses write ``_pass`` (see the module docstring)."""

    def __init__(self, embedder: Embeds, vectors: VectorStore, what: str) -> None:
        self._embedder = embedder
        self._vectors = vectors
        self._what = what
        self._wake_send, self._wake_recv = trio.open_memory_channel[None](1)
        self._retry_s = RETRY_S
        self._room_wait_s = RETRY_S
        #: Vector length: from the vectors file at start, then from each answer (None until known).
        self._dim: int | None = None
        #: "starting", "embedding", "caught up", "endpoint unreachable", WAITING_FOR_ROOM or "stopped".
        self.state = "starting"
        #: Passes finished so far (one that starts after a change sees it).
        self.passes = 0
        #: Rows were dropped (or the file just opened) since texts no row names were last bounded.
        self._untidy = True

    @property
    def model(self) -> str:
        return self._embedder.model

    def wake(self) -> None:
        """Tell the task that something changed; never blocks, never fails."""
        try:
            self._wake_send.send_nowait(None)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # a wake-up is already pending, or the task is gone

    async def _pass(self) -> bool:
        """One look at what should be embedded; True if it embedded (or tried to) anything."""
        raise NotImplementedError

    def _embedded(self, items: int, vectors: int, *, refused: bool = False) -> None:
        """Called after ``items`` were stored with ``vectors`` vectors; ``refused``: marked refused (in whole,
        ``vectors`` 0, or in part)."""

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep the vectors up to date until cancelled. A disk too full to open the vectors file
        (a start on a full disk) makes the task wait for room, as a full disk later does."""
        unopened: DiskFullError | VectorsBusyError | None = None
        try:
            await self._open()
        except (DiskFullError, VectorsBusyError) as exc:
            unopened = exc
        except StoreError as exc:
            log.error("semantic recall of %s is off: %s", self._what, exc)
            self.state = "stopped"
            task_status.started()
            return
        task_status.started()
        try:
            while True:
                try:
                    if unopened is not None:
                        await self._wait_out(unopened)
                        await self._open()
                        unopened = None
                    busy = await self._pass()
                except (DiskFullError, VectorsBusyError) as exc:
                    if unopened is not None:
                        unopened = exc  # (waited for above)
                    else:
                        await self._wait_out(exc)
                    continue
                except StoreError as exc:
                    log.error("semantic recall of %s stops: %s", self._what, exc)
                    self.state = "stopped"
                    return
                self.passes += 1
                if not busy:
                    with trio.move_on_after(POLL_S):
                        await self._wake_recv.receive()
        finally:
            self._wake_recv.close()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._vectors.close)

    async def _open(self) -> None:
        """Open the vectors file and learn the dimension stored (None: none, or several)."""
        await trio.to_thread.run_sync(self._vectors.open)
        dims = await trio.to_thread.run_sync(self._vectors.dimensions, self.model)
        self._dim = dims[0] if len(dims) == 1 else None
        await self._refusals_forgotten()  # (learns the count)

    async def _refusals_forgotten(self) -> bool:
        """Whether ``ctxtrio doctor --repair`` forgot refusals in the file since the last look: a pass that
        would find nothing changed (a catalog or journals as they were) then looks at every item again, so
        a running server sends them within POLL_S, not at its next start only."""
        return await trio.to_thread.run_sync(self._vectors.forgets_seen_elsewhere)

    async def _nearest(
        self, query: str, journals: Collection[str] | None, limit: int
    ) -> tuple[list[VectorHit], str | None]:
        """The items nearest ``query`` in meaning, and why none were asked (None when they were)."""
        if self.state == "stopped":
            return [], "semantic recall is off (the vectors file failed; see the server log)"
        if self._dim is None:
            return [], "semantic recall skipped: nothing is embedded yet"
        with trio.move_on_after(QUERY_S):
            try:
                vector = await self._embedder.query(query)
            except LLMError as exc:
                return [], f"semantic recall skipped: the embedding endpoint failed ({exc})"
            if len(vector) != self._dim:
                return [], "semantic recall skipped: the embedding model changed; re-embedding"
            try:
                found = await trio.to_thread.run_sync(
                    lambda: self._vectors.nearest(self.model, vector, journals=journals, limit=limit)
                )
            except StoreError as exc:
                return [], f"semantic recall skipped: {exc}"
            return found, None
        return [], f"semantic recall skipped: the embedding endpoint did not answer within {QUERY_S:g} s"

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
        self._embedded(items, stored)
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
        self._embedded(items, stored, refused=bool(refused))
        return items == 1

    async def _store(self, rows: list[VectorRow], dim: int) -> tuple[int, int]:
        """(items, rows) stored (:meth:`VectorStore.add <.vectors.VectorStore.add>`)."""
        # Shielded: a vector the endpoint already computed is kept even if shutdown is underway.
        with trio.CancelScope(shield=True):
            stored = await trio.to_thread.run_sync(self._vectors.add, self.model, dim, rows)
        self._room_wait_s = RETRY_S
        return stored

    async def _drop_except(self, journals: Collection[str], forgotten: Callable[[str], bool] | None = None) -> None:
        """Drop rows of journals gone, or of another model or dimension (their texts stay a while:
        :meth:`_tidy`; those of ``forgotten`` journals go now, :meth:`VectorStore.drop_except <.vectors.VectorStore.drop_except>`)."""
        drop = functools.partial(self._vectors.drop_except, forgotten=forgotten)
        if await trio.to_thread.run_sync(drop, self.model, self._dim, journals):
            self._untidy = True

    async def _drop_items(self, journal: str, items: Collection[str]) -> None:
        """Drop the rows of ``items`` of ``journal`` (their texts stay a while: :meth:`_tidy`)."""
        if await trio.to_thread.run_sync(self._vectors.drop_items, self.model, journal, items):
            self._untidy = True

    async def _tidy(self) -> None:
        """Called once every item is embedded: bound the texts no row names (kept so far for an edited
        or forgotten item ingested again), and drop an older file's rows no part took."""
        if self._untidy and self._dim is not None:
            await trio.to_thread.run_sync(lambda: self._vectors.collect(self.model, self._dim or 0, legacy=True))
            self._untidy = False

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
