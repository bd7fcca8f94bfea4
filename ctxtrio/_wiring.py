"""The :class:`Wiring` of one open instance, and :func:`open_wiring`, which builds it.

::

    open_wiring(config) → Wiring
    ├─ store writer task      the only writer of journals and index
    ├─ LLM client             httpx + circuit breaker (absent with --no-llm)
    ├─ calibrator task        background; publishes TokenModels; never blocks startup
    ├─ summary worker         background; LLM summaries one request at a time, outliving calls
    ├─ embedder               (--embed-model) background; chunk vectors for hybrid search
    └─ entry embedder         (--embed-model) background; session entry vectors for context_recall

A :class:`Wiring` is the public :class:`~ctxtrio._context.Context` (config, data dir,
sessions, documents) and the handles behind it: the store handle, the live token
settings, the summarizer and the LLM client. ``_app`` (the server), the tool runner and
its handlers, the MCP surface and the CLI take it; library users get only its
``context`` (``ctxtrio.open_context``). It is not exported.

Startup follows dependency order and ``task_status.started()`` is reported only when a
component is usable, so nothing sees a request before the store is ready. On exit the
background tasks stop, then the store handle closes so the writer drains its queue,
fsyncs and exits. A crash in any task cancels the tree and propagates.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import sniffio
import trio

from ._config import field_names
from ._context import Context
from ._errors import EventLoopError, one_error
from ._live import Live
from .docs.chunks import chunk_rows
from .docs.embedding import SemanticIndex
from .docs.pool import ChunkPool
from .docs.service import DocumentService, repository_of
from .llm.calibration import run_calibrator
from .llm.counting import TokenCounter
from .llm.embeddings import Embedder
from .llm.messages import LLMSettings
from .llm.summarizer import Summarizer
from .memory.semantic import EntryVectors
from .memory.service import SessionService, held_sessions
from .store.handle import StoreHandle
from .store.layout import existing_data_dir, prepare_data_dir
from .store.vectors import VectorStore
from .store.writer import run_store_writer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ._config import Config
    from .llm.client import LLMClient
    from .store.layout import DataDir

__all__ = ["Wiring", "open_wiring"]

log = logging.getLogger("ctxtrio")

#: How long shutdown lets the store writer drain its queue before it gives up on locked
#: journals and is cancelled (see _drain).
DRAIN_DEADLINE_S = 10.0


@dataclass(frozen=True, slots=True)
class Wiring:
    """A :class:`Context` and what the server runs on. Valid inside :func:`open_wiring` only.

    ``config``, ``data``, ``sessions`` and ``documents`` are read through ``context``:
    there is one of each.
    """

    context: Context
    #: The store writer's handle (the services hold the same one).
    store: StoreHandle
    #: Budget, token model and detected context length, updated by the calibrator.
    live: Live
    summarizer: Summarizer
    #: None with --no-llm. Quoted: nothing reads this class's field types at run time,
    #: and the client's module (httpx) is imported only when an LLM is configured.
    llm: "LLMClient | None"

    @property
    def config(self) -> Config:
        return self.context.config

    @property
    def data(self) -> DataDir:
        return self.context.data

    @property
    def sessions(self) -> SessionService:
        return self.context.sessions

    @property
    def documents(self) -> DocumentService:
        return self.context.documents


@asynccontextmanager
async def open_wiring(config: Config, *, read_only: bool = False) -> AsyncIterator[Wiring]:
    """Open the data dir and start the background tasks; yield the :class:`Wiring`.

    What ``ctxtrio.open_context`` promises holds here too: on exit every acknowledged
    append is on disk; ConfigError, StoreError and EventLoopError as documented there; a
    CtxError from the body or a background task, and any Exception the body raises, comes out as itself. ``read_only``
    (``ctxtrio doctor`` without ``--repair``): the store writes, creates and heals nothing
    (``run_store_writer``'s ``read_only``): reads only, every write fails with StoreError.
    """
    _require_trio()
    raised: list[Exception] = []
    with one_error(raised):
        async with _open_wiring(config, read_only=read_only) as wiring:
            try:
                yield wiring
            except Exception as exc:  # the caller's own error, noted so it comes out unwrapped, then re-raised
                raised.append(exc)
                raise


@asynccontextmanager
async def _open_wiring(config: Config, *, read_only: bool) -> AsyncIterator[Wiring]:
    # A Config the command line built is validated already (naming flags and variables); one a program
    # built is refused naming its own fields (budget_tokens, not --budget).
    config = config.validated(given=field_names())
    data = await trio.to_thread.run_sync(existing_data_dir if read_only else prepare_data_dir, config.data_dir)
    live = Live.from_config(config)
    writer_done = trio.Event()

    async def run_writer(*, task_status: trio.TaskStatus[StoreHandle]) -> None:
        try:
            await run_store_writer(
                data,
                lock_timeout_s=config.lock_timeout_s,
                rows_for=chunk_rows,
                read_only=read_only,
                task_status=task_status,
            )
        finally:
            writer_done.set()

    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(run_writer)
        try:
            async with _open_llm(config) as llm, _open_embedder(config) as embedder, trio.open_nursery() as background:
                if llm is not None:
                    live.counter = TokenCounter(live.tokens, llm)
                    explicit_budget = config.budget_tokens is not None
                    await background.start(
                        partial(
                            run_calibrator,
                            llm,
                            live.tokens,
                            cache_path=data.calibration_path,
                            on_context_length=partial(live.set_context_length, explicit_budget=explicit_budget),
                            counter=live.counter,
                        )
                    )
                summarizer = Summarizer(
                    llm,
                    live.tokens,
                    context_tokens=lambda: live.context_length,
                    count_tokens=lambda text: live.counter.count(text),
                )
                if llm is not None:
                    await background.start(summarizer.run_worker)
                sessions = SessionService(store, live, summarizer, query_expansion=config.query_expansion)
                documents = DocumentService(store, live, config, summarizer, pool=ChunkPool(background))
                documents.sessions = sessions.status  # a doc_window cursor belongs to a session
                if embedder is not None:
                    semantic = SemanticIndex(repository_of(documents), embedder, VectorStore(data.vectors_path))
                    await background.start(semantic.run)
                    documents.semantic = semantic
                    entries = EntryVectors(held_sessions(sessions), embedder, VectorStore(data.session_vectors_path))
                    await background.start(entries.run)
                    sessions.semantic = entries
                try:
                    yield Wiring(
                        context=Context(config=config, data=data, sessions=sessions, documents=documents),
                        store=store,
                        live=live,
                        summarizer=summarizer,
                        llm=llm,
                    )
                finally:
                    background.cancel_scope.cancel()  # calibration stops; the LLM client closes next
        finally:
            with trio.CancelScope(shield=True):
                await _drain(store, writer_done)
                if not writer_done.is_set():
                    nursery.cancel_scope.cancel()  # the writer stops once its thread returns


async def _drain(store: StoreHandle, writer_done: trio.Event) -> None:
    """Close the store and let the writer drain its queue for up to DRAIN_DEADLINE_S.

    Past the deadline, journal lock waits (another process holding a journal) give up at
    once, so the writer's current batch ends and it can be cancelled. Every append
    already acknowledged is on disk; the rest fail with StoreError.
    """
    await store.aclose()
    with trio.move_on_after(DRAIN_DEADLINE_S):
        await writer_done.wait()
    if not writer_done.is_set():
        log.warning("the store writer is still draining after %g s: giving up on locked journals", DRAIN_DEADLINE_S)
        store.give_up_waiting()


def _require_trio() -> None:
    """Raise EventLoopError unless running on trio (directly or as anyio's trio backend)."""
    try:
        library = sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        library = "no recognised event loop"
    if library != "trio":
        raise EventLoopError(
            f"ctxtrio runs on trio, but this was called from {library}: start your program with "
            'trio.run(main), or anyio.run(main, backend="trio")'
        )


@asynccontextmanager
async def _open_llm(config: Config) -> AsyncIterator[LLMClient | None]:
    """The LLM client when the LLM is enabled, else None (extractive summaries only)."""
    if not config.llm_enabled:
        yield None
        return
    settings = LLMSettings(
        base_url=config.llm_base_url,
        model=config.llm_model,
        api_key=config.llm_api_key,
        # Summary requests run in the background worker, not inside tool calls, so a
        # slow model may take its time over a long prompt: timeout_s caps the wait for
        # the first token (a late first token from a server that has worked for us is
        # asked again once with twice the wait: llm/_first_token); after it, a stream
        # silent for stall_s is a hang. A request a call's deadline abandons opens the
        # breaker only if the endpoint was silent before it too (llm/_requests.Requests.guarded).
        timeout_s=config.llm_timeout_s,
        concurrency=config.llm_concurrency,
    )
    from .llm.client import open_llm_client  # httpx: imported only when an LLM is configured

    async with open_llm_client(settings) as client:
        yield client


@asynccontextmanager
async def _open_embedder(config: Config) -> AsyncIterator[Embedder | None]:
    """The embedding endpoint's client when ``--embed-model`` is set, else None.

    Its own client and breaker: an embedding endpoint that is down must not stop
    summaries. Two requests at once: the background embedder sends one at a time, and a
    search's query need not queue behind it here.
    """
    if not config.embed_model:
        yield None
        return
    settings = LLMSettings(
        base_url=config.embed_url,
        model=config.embed_model,
        api_key=config.llm_api_key,
        timeout_s=config.llm_timeout_s,
        concurrency=2,
    )
    from .llm.client import open_llm_client  # httpx: imported only when an endpoint is configured

    async with open_llm_client(settings) as client:
        yield Embedder(client, config.embed_model)
