"""What the two background embedders share: chunks' (``docs/embedding.py``) and session entries' (``memory/semantic.py``).

A :class:`VectorTask` keeps one :class:`~.vectors.VectorStore` up to date for one
embedding model: :meth:`VectorTask.run` (started in the background nursery) reports
started at once, opens the file (state OPENING; a search meanwhile answers by keyword and
says why: the open of a big file is seconds, and the server's start waited for it),
learns the dimension stored, then repeats the subclass's ``_pass`` until
cancelled, waiting for a wake-up (:meth:`VectorTask.wake`, a send that never blocks on
a one-slot channel) or POLL_S when a pass found nothing to do. A pass stores batches
through :meth:`~.vector_batch.BatchEmbedder._embed` (``vector_batch.py``: what the file
holds, one request for the rest, refusals, and the waits when the endpoint, the disk or
another process's lock fails a batch). Rows dropped (:meth:`VectorTask._drop_except`,
:meth:`VectorTask._drop_items`) leave their texts for a while, so an item made again costs
nothing; once every item is embedded, :meth:`VectorTask._tidy` bounds them. A broken
vectors file (StoreError): this kind of recall stops, logged, never the server.

:meth:`VectorTask._nearest` is the query side: the query's vector within QUERY_S (the
embedder caches it), then the scan of the matrix in memory. A search never reads the matrix
itself (5.2 s at 600,000 rows, in a thread QUERY_S cannot abandon, with the store's lock held):
the task reads it in the background (:meth:`VectorTask._keep_loaded`) after the open, when a
search found it out of memory (rows dropped), and before it says "caught up"; a search
meanwhile answers by keyword (LOADING). Nor does its scan wait for this task's walks of the file (a
pass's tally, a collection: seconds at 600,000 rows): it takes the matrix's own lock, not the file's
(``vector_memory.py``).
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

import trio

from .._errors import LLMError, StoreError
from .reading import DiskFullError
from .vector_batch import BatchEmbedder
from .vector_schema import VectorsBusyError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from .vector_batch import Embeds
    from .vectors import VectorHit, VectorStore

__all__ = [
    "LOADING",
    "OPENING",
    "POLL_S",
    "QUERY_S",
    "RETRY_REFUSED",
    "VectorTask",
]

log = logging.getLogger("ctxtrio.embeddings")

#: What a status line says after a count of refused items: how to have them sent again (a server whose
#: batch was too small, raised since); a refusal is otherwise kept for good, and never asked again.
RETRY_REFUSED = "refused ones are sent again after ctxtrio doctor --repair"
#: The state of a task until its vectors file is open: opening one checks every row for an orphan
#: (``vector_schema._heal``: 1.6-2.5 s at 600,000 rows) and, the first time after 9b7a7ae, indexes
#: them all (``rows_digest``: 11.4 s there), so it happens after the task reported started.
OPENING = "opening the vectors file"
#: Why a search answers by keyword while its vectors are read into memory, after a start or rows dropped
#: (:meth:`VectorTask._keep_loaded`): 5.2 s at 600,000 rows, which a search waited for before.
LOADING = "semantic recall skipped: the vectors are still loading (read into memory after a start or a change)"
POLL_S = 5.0
#: How long a search or recall waits for its query's vector before answering from BM25 alone.
QUERY_S = 0.5


class VectorTask(BatchEmbedder):
    """A background embedder of one vectors file; subclasses write ``_pass`` (see the module docstring)."""

    def __init__(self, embedder: Embeds, vectors: VectorStore, what: str) -> None:
        super().__init__(embedder, vectors, what)
        self._wake_send, self._wake_recv = trio.open_memory_channel[None](1)
        #: Passes finished so far (one that starts after a change sees it).
        self.passes = 0
        #: Rows were dropped (or the file just opened) since texts no row names were last bounded.
        self._untidy = True
        #: The vectors file was opened (:meth:`_open`); until then a search answers by keyword.
        self._opened = False
        #: A search found the matrix not in memory: :meth:`_keep_loaded` reads it (one read at a time).
        self._load_send, self._load_recv = trio.open_memory_channel[None](1)
        #: Why the last read of the matrix failed (a search says it), None after one that did not.
        self._unloaded: str | None = None

    def wake(self) -> None:
        """Tell the task that something changed; never blocks, never fails."""
        try:
            self._wake_send.send_nowait(None)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # a wake-up is already pending, or the task is gone

    async def _pass(self) -> bool:
        """One look at what should be embedded; True if it embedded (or tried to) anything."""
        raise NotImplementedError

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Keep the vectors up to date until cancelled. Reports started before it opens the vectors file
        (state OPENING): the server's start does not wait for the open, and a search meanwhile answers by
        keyword (:meth:`_nearest` says why). A disk too full to open the file (a start on a full disk), or
        another process's lock held too long, makes the task wait and open it again, as a full disk later
        does; any other failure to open it turns this kind of recall off, logged."""
        self.state = OPENING
        task_status.started()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._keep_loaded)
            await self._keep_up()
            nursery.cancel_scope.cancel()

    async def _keep_up(self) -> None:
        """:meth:`run`'s work: open the file, then the passes (see there)."""
        try:
            unopened: DiskFullError | VectorsBusyError | None = None
            try:
                await self._open()
            except (DiskFullError, VectorsBusyError) as exc:
                unopened = exc
            except StoreError as exc:
                log.error("semantic recall of %s is off: %s", self._what, exc)
                self.state = "stopped"
                return
            self._want_loaded()  # read beside the first pass, not when the first search comes
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
            self._load_send.close()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(self._vectors.close)

    async def _open(self) -> None:
        """Open the vectors file and learn the dimension stored (None: none, or several)."""
        await trio.to_thread.run_sync(self._vectors.open)
        dims = await trio.to_thread.run_sync(self._vectors.dimensions, self.model)
        self._dim = dims[0] if len(dims) == 1 else None
        await self._refusals_forgotten()  # (learns the count)
        self._opened = True
        if self.state == OPENING:
            self.state = "starting"

    def _want_loaded(self) -> None:
        """Have :meth:`_keep_loaded` read the matrix; never blocks, never fails."""
        try:
            self._load_send.send_nowait(None)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # a read is already asked for, or the task is gone

    async def _keep_loaded(self) -> None:
        """Read the matrix into memory when asked (after the open, and by a search that found it out of memory:
        after a start, or rows dropped): a search never reads it itself, so it never waits seconds for a read its
        QUERY_S cannot cut short (5.2 s at 600,000 rows). One read at a time: this task does them all."""
        async for _ in self._load_recv:
            await self._load()

    async def _load(self) -> None:
        """Read the matrix of the dimension stored unless it is in memory; a failure is said by the next search."""
        dim = self._dim
        if dim is None or self._vectors.loaded(self.model, dim):
            return
        try:
            await trio.to_thread.run_sync(self._vectors.load, self.model, dim)
        except StoreError as exc:
            log.warning("vectors of %s not read into memory: %s", self._what, exc)
            self._unloaded = str(exc)
        else:
            self._unloaded = None

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
        if not self._opened:
            if self.state == OPENING:
                return [], "semantic recall skipped: the vectors file is still opening (the server just started)"
            return [], f"semantic recall skipped: the vectors file is not open yet ({self.state})"
        if self._dim is None:
            return [], "semantic recall skipped: nothing is embedded yet"
        with trio.move_on_after(QUERY_S):
            try:
                vector = await self._embedder.query(query)
            except LLMError as exc:
                return [], f"semantic recall skipped: the embedding endpoint failed ({exc})"
            if len(vector) != self._dim:
                return [], "semantic recall skipped: the embedding model changed; re-embedding"
            found = await trio.to_thread.run_sync(
                lambda: self._vectors.nearest_in_memory(self.model, vector, journals=journals, limit=limit)
            )
            if found is None:
                self._want_loaded()
                if self._unloaded is not None:
                    return [], f"semantic recall skipped: {self._unloaded}"
                return [], LOADING
            return found, None
        return [], f"semantic recall skipped: the embedding endpoint did not answer within {QUERY_S:g} s"

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
        or forgotten item ingested again), and drop an older file's rows no part took. Reads the matrix into
        memory first if it is not there (a fresh file's first rows, rows dropped): a search once "caught up"
        finds it there, as it did when a search read it itself (the benches search once caught up)."""
        await self._load()
        if self._untidy and self._dim is not None:
            await trio.to_thread.run_sync(lambda: self._vectors.collect(self.model, self._dim or 0, legacy=True))
            self._untidy = False
