"""The nursery tree: :func:`open_context` (the library entry point) and :func:`serve`.

::

    serve(config)
    └─ open_context(config) → Context
       ├─ store writer task      the only writer of journals and index
       ├─ LLM client             httpx + circuit breaker (absent with --no-llm)
       ├─ calibrator task        background; publishes TokenModels; never blocks startup
       ├─ summary worker         background; LLM summaries one request at a time, outliving calls
       ├─ embedder               (--embed-model) background; chunk vectors for hybrid search
       └─ transport, started last: stdio, or HTTP on hypercorn's trio worker

Startup follows dependency order and ``task_status.started()`` is reported only when a
component is usable, so the transport (started last) never sees a request before the
store is ready. Shutdown is the reverse: stop accepting, give in-flight calls
``shutdown_grace_s``, then close the store handle so the writer drains its queue,
fsyncs and exits. A crash in any task cancels the tree and propagates.
"""

from __future__ import annotations

import logging
import signal
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

import sniffio
import trio

from ._context import Context
from ._errors import EventLoopError, one_error
from ._live import Live
from ._sdk import make_server
from ._sdk.events import Hub
from ._sdk.surface import install
from ._version import __version__
from .docs.chunks import chunk_rows
from .docs.embedding import SemanticIndex
from .docs.pool import ChunkPool
from .docs.service import DocumentService
from .llm.calibration import run_calibrator
from .llm.client import LLMClient, open_llm_client
from .llm.counting import TokenCounter
from .llm.embeddings import Embedder
from .llm.messages import LLMSettings
from .llm.summarizer import Summarizer
from .memory.service import SessionService
from .store.layout import prepare_data_dir
from .store.vectors import VectorStore
from .store.writer import run_store_writer
from .surface.served import ServedSurface
from .surface.watch import watch
from .tools.compact import COMPACT_TOOLS
from .tools.runner import ToolRunner
from .tools.table import INSTRUCTIONS, TOOLS, listing
from .transport.stdio import MAX_UNANSWERED, CancellableLines, Traffic, claim_stdout, serve_stdio
from .transport.warm_start import AnswerRecorder, Handoff, WarmStart, begin_warm_start

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp.server.lowlevel import Server

    from ._config import Config
    from .store.handle import StoreHandle

__all__ = ["build_server", "open_context", "running_server", "serve"]

log = logging.getLogger("ctxtrio")

#: How long shutdown lets the store writer drain its queue before it gives up on locked
#: journals and is cancelled (see _drain).
DRAIN_DEADLINE_S = 10.0


@asynccontextmanager
async def open_context(config: Config) -> AsyncIterator[Context]:
    """Open the data dir and start the background tasks; yield a usable :class:`Context`.

    On exit the store writer drains every queued append (each already acknowledged one
    is on disk) before this returns. Raises ConfigError or StoreError when the config
    or the data dir is unusable, and EventLoopError when entered from asyncio. A
    CtxError raised in the body, or by a background task, comes out as itself, not
    inside an exception group.
    """
    _require_trio()
    with one_error():
        async with _open_context(config) as ctx:
            yield ctx


@asynccontextmanager
async def _open_context(config: Config) -> AsyncIterator[Context]:
    config = config.validated()
    data = await trio.to_thread.run_sync(prepare_data_dir, config.data_dir)
    live = Live.from_config(config)
    writer_done = trio.Event()

    async def run_writer(*, task_status: trio.TaskStatus[StoreHandle]) -> None:
        try:
            await run_store_writer(
                data, lock_timeout_s=config.lock_timeout_s, rows_for=chunk_rows, task_status=task_status
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
                sessions = SessionService(store, live, summarizer)
                documents = DocumentService(store, live, config, summarizer, pool=ChunkPool(background))
                if embedder is not None:
                    semantic = SemanticIndex(documents.repository, embedder, VectorStore(data.vectors_path))
                    await background.start(semantic.run)
                    documents.semantic = semantic
                try:
                    yield Context(
                        config=config,
                        data=data,
                        store=store,
                        live=live,
                        sessions=sessions,
                        documents=documents,
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
        # slow model may take its time over a long prompt: timeout_s bounds the wait
        # for the first token; after it, a stream silent for stall_s is a hang. (A
        # request a call's deadline cuts after 5 s without any answer still opens the
        # breaker: see LLMClient._guarded.)
        timeout_s=config.llm_timeout_s,
        concurrency=config.llm_concurrency,
    )
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
    async with open_llm_client(settings) as client:
        yield Embedder(client, config.embed_model)


def build_server(ctx: Context) -> Server[Any]:
    """The MCP server for ``ctx`` (imports the SDK): tools, resources, prompts, completion.

    Subscriptions and warnings are only delivered while :func:`running_server` runs.
    """
    return _build(ctx)[0]


def _build(ctx: Context) -> tuple[Server[Any], Hub]:
    tools = COMPACT_TOOLS if ctx.config.tools == "compact" else TOOLS
    runner = ToolRunner(ctx, tools)
    server = make_server(
        name="ctxtrio",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=[listing(tool) for tool in tools],
        call=runner.call,
    )
    hub = Hub(secrets=[secret for secret in (ctx.config.llm_api_key, ctx.config.http_token) if secret])
    install(server, ServedSurface(ctx), hub)
    return server, hub


@asynccontextmanager
async def running_server(ctx: Context) -> AsyncIterator[Server[Any]]:
    """:func:`build_server`, with the tasks that deliver its notifications running.

    The data-dir watcher (resource updates and list changes, from any process sharing
    the data dir) and the warning forwarder (``logging/setLevel``) stop on exit.
    """
    server, hub = _build(ctx)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run_logs)
        await nursery.start(partial(watch, ctx, hub))
        yield server
        nursery.cancel_scope.cancel()


async def serve(config: Config, *, stdin_fd: int = 0, warm: WarmStart | None = None) -> None:
    """Run the MCP server until stdin closes (stdio), or SIGTERM / SIGINT; then shut down cleanly.

    ``warm`` is an early responder already answering on stdin (see transport/warm_start.py).
    A CtxError that stops the server (an unusable data dir or index) comes out as itself.
    """
    with one_error():
        await _serve(config, stdin_fd=stdin_fd, warm=warm)


async def _serve(config: Config, *, stdin_fd: int, warm: WarmStart | None) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with open_context(config) as ctx, running_server(ctx) as server:
            if ctx.config.transport == "http":
                await _serve_http(ctx, server, signals)
            else:
                if warm is None and ctx.config.warm_start:  # library use: no early answers, but record them
                    settings = ctx.config.answer_settings
                    warm = await trio.to_thread.run_sync(partial(begin_warm_start, settings, answer=False))
                await _serve_stdio(ctx, server, signals, stdin_fd, warm)


async def _serve_stdio(
    ctx: Context, server: Server[Any], signals: AsyncIterator[int], stdin_fd: int, warm: WarmStart | None
) -> None:
    handoff = Handoff()
    recorder: AnswerRecorder | None = None
    if warm is not None:
        handoff = await trio.to_thread.run_sync(warm.handoff)  # joins the responder's thread
        recorder = handoff.recorder(warm.path, warm.stamp, warm.answers)
    if handoff.answered:
        log.info("warm start: answered %d request(s) from recorded answers", len(handoff.answered))
    traffic = Traffic(recorder)
    grace_s = ctx.config.shutdown_grace_s
    signalled: list[str] = []

    async def drain() -> None:
        # EOF or a signal: accept nothing more, but let calls in flight finish.
        cause = f"stopping on {signalled[0]}" if signalled else "stdin closed"
        log.info("%s: %d request(s) in flight", cause, len(traffic.inflight))
        with trio.move_on_after(grace_s) as grace:
            await traffic.inflight.wait_idle()
        if grace.cancelled_caught:
            log.warning("%d request(s) still in flight after %g s: cancelling them", len(traffic.inflight), grace_s)

    preload = b"".join(handoff.lines) + handoff.rest
    lines = CancellableLines(
        stdin_fd,
        preload=preload,
        on_line=traffic.incoming,
        drain=drain,
        room=partial(traffic.inflight.wait_below, MAX_UNANSWERED),
    )
    transport = trio.CancelScope()

    async def stop_on_signal() -> None:
        async for signum in signals:
            signalled.append(signal.Signals(signum).name)  # drain() says why it drains
            lines.close()  # stop accepting
            transport.deadline = trio.current_time() + grace_s + 0.5  # backstop behind drain()
            return

    try:
        with claim_stdout() as out_fd:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(stop_on_signal)
                log.info("ready: MCP over stdio, data dir %s", ctx.data.root)
                with transport:
                    await serve_stdio(server, lines, out_fd, traffic)
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await lines.aclose()


async def _serve_http(ctx: Context, server: Server[Any], signals: AsyncIterator[int]) -> None:
    from .transport.http import serve_http

    shutdown = trio.Event()

    async def stop_on_signal() -> None:
        async for signum in signals:
            log.info("received %s: stopping", signal.Signals(signum).name)
            shutdown.set()  # hypercorn stops accepting, then gives in-flight calls the grace period
            return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(stop_on_signal)
        binds: list[str] = await nursery.start(serve_http, server, ctx.config, shutdown)
        log.info("ready: MCP over HTTP at %s, data dir %s", ", ".join(f"{b}/mcp" for b in binds), ctx.data.root)
        await shutdown.wait()
