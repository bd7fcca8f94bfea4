"""The nursery tree: :func:`open_context` (the library entry point) and :func:`serve`.

::

    serve(config)
    └─ _wiring.open_wiring(config) → Wiring     (open_context yields only its Context)
       ├─ store writer task      the only writer of journals and index
       ├─ LLM client             httpx + circuit breaker (absent with --no-llm)
       ├─ calibrator task        background; publishes TokenModels; never blocks startup
       ├─ summary worker         background; LLM summaries one request at a time, outliving calls
       ├─ embedders              (--embed-model) background; chunk and session entry vectors
       └─ transport, started last: stdio, or HTTP on hypercorn's trio worker

Startup follows dependency order and ``task_status.started()`` is reported only when a
component is usable, so the transport (started last) never sees a request before the
store is ready. Shutdown is the reverse: stop accepting, give in-flight calls
``shutdown_grace_s``, then close the store handle so the writer drains its queue,
fsyncs and exits. A crash in any task cancels the tree and propagates.
"""

from __future__ import annotations

import gc
import logging
import signal
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from ._errors import one_error
from ._sdk import make_server
from ._sdk.events import Hub
from ._sdk.surface import install
from ._version import __version__
from ._wiring import open_wiring
from .surface.served import ServedSurface
from .surface.watch import Journals, watch
from .tools.compact import COMPACT_TOOLS
from .tools.runner import ToolRunner
from .tools.stopping import ANSWER_S, Stopping
from .tools.table import INSTRUCTIONS, TOOLS, listing
from .transport.stdio import MAX_UNANSWERED, CancellableLines, Traffic, claim_stdout, serve_stdio
from .transport.warm_start import AnswerRecorder, Handoff, WarmStart, begin_warm_start

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp.server.lowlevel import Server

    from ._config import Config
    from ._context import Context
    from ._wiring import Wiring

__all__ = ["build_server", "open_context", "running_server", "serve"]

log = logging.getLogger("ctxtrio")


@asynccontextmanager
async def open_context(config: Config) -> AsyncIterator[Context]:
    """Open the data dir and start the background tasks; yield a usable :class:`Context`.

    On exit the store writer drains every queued append (each already acknowledged one
    is on disk) before this returns. Raises ConfigError or StoreError when the config
    or the data dir is unusable, and EventLoopError when entered from asyncio. A
    CtxError raised in the body, or by a background task, comes out as itself, not
    inside an exception group; so does any other Exception the body raises (the
    caller's own ``KeyError``, ``AssertionError``, ...).
    """
    async with open_wiring(config) as wiring:
        yield wiring.context


def build_server(ctx: Wiring) -> Server[Any]:
    """The MCP server for ``ctx`` (imports the SDK): tools, resources, prompts, completion.

    Subscriptions and warnings are only delivered while :func:`running_server` runs.
    """
    return _build(ctx, Stopping(), Journals(ctx.data))[0]


def _build(ctx: Wiring, stopping: Stopping, journals: Journals) -> tuple[Server[Any], Hub]:
    tools = COMPACT_TOOLS if ctx.config.tools == "compact" else TOOLS
    runner = ToolRunner(ctx, tools, stopping=stopping)
    server = make_server(
        name="ctxtrio",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=[listing(tool) for tool in tools],
        call=runner.call,
    )
    hub = Hub(
        secrets=[secret for secret in (ctx.config.llm_api_key, ctx.config.http_token) if secret],
        promise=journals.promise,
    )
    stopping.at_stop(hub.end_listens)  # listen streams end with their result when the transport stops
    install(server, ServedSurface(ctx, [tool.name for tool in tools], stopping), hub)
    return server, hub


@asynccontextmanager
async def running_server(ctx: Wiring, stopping: Stopping | None = None) -> AsyncIterator[Server[Any]]:
    """:func:`build_server`, with the tasks that deliver its notifications running.

    The data-dir watcher (resource updates and list changes, from any process sharing
    the data dir) and the warning forwarder (``logging/setLevel``) stop on exit.
    ``stopping`` is what the transport's stop sets: calls past the grace are answered.
    """
    journals = Journals(ctx.data)  # the session stamps subscriptions take and the watcher compares with
    server, hub = _build(ctx, stopping if stopping is not None else Stopping(), journals)
    async with trio.open_nursery() as nursery:
        await nursery.start(hub.run_logs)
        await nursery.start(partial(watch, ctx, hub, journals))
        yield server
        nursery.cancel_scope.cancel()


async def serve(config: Config, *, stdin_fd: int = 0, warm: WarmStart | None = None) -> None:
    """Run the MCP server until stdin closes (stdio), or SIGTERM / SIGINT; then shut down cleanly.

    ``warm`` is an early responder already answering on stdin (see transport/warm_start.py).
    A CtxError that stops the server (an unusable data dir or index) comes out as itself.
    """
    with one_error():
        await _serve(config, stdin_fd=stdin_fd, warm=warm, freeze=False)


async def serve_command(config: Config, *, warm: WarmStart | None = None) -> None:
    """:func:`serve` as the ``ctxtrio`` command runs it: the process is the server's alone, so what its start
    made is hidden from the collector (``gc.freeze``). A library's :func:`serve` leaves the collector alone:
    frozen, the caller's own objects would never be collected (cycles among them leak)."""
    with one_error():
        await _serve(config, stdin_fd=0, warm=warm, freeze=True)


async def _serve(config: Config, *, stdin_fd: int, warm: WarmStart | None, freeze: bool) -> None:
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        stopping = Stopping()
        async with open_wiring(config) as ctx, running_server(ctx, stopping) as server:
            # What the start made lives as long as the server (the watcher's first look replayed the catalog: 85,000
            # objects at 20,000 documents): hidden from the collector (Python's gc.freeze), whose full passes walked it
            # 6-7 times a minute under a team's ingests, 90-145 ms CPU each, 22-79 ms with it hidden; RSS the same
            # (stress/busy_search.py). Nothing in it is freed by the collector alone: entries go by reference counts.
            if freeze:
                gc.freeze()
            if ctx.config.transport == "http":
                await _serve_http(ctx, server, signals, stopping)
            else:
                if warm is None and ctx.config.warm_start:  # library use: no early answers, but record them
                    settings = ctx.config.answer_settings
                    warm = await trio.to_thread.run_sync(partial(begin_warm_start, settings, answer=False))
                await _serve_stdio(ctx, server, signals, stdin_fd, warm, stopping)


async def _serve_stdio(
    ctx: Wiring,
    server: Server[Any],
    signals: AsyncIterator[int],
    stdin_fd: int,
    warm: WarmStart | None,
    stopping: Stopping,
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
        # A tool call past the grace is answered that the server stops. Not accepting: the reader has ended, so
        # every request read was asked before the stop, a listen whose handler has not started yet too.
        stopping.stop_within(grace_s, accepting=False)
        await traffic.inflight.settle(grace_s, ANSWER_S)

    preload = b"".join(handoff.lines) + handoff.rest
    lines = CancellableLines(
        stdin_fd,
        preload=preload,
        drain=drain,
        room=partial(traffic.inflight.wait_below, MAX_UNANSWERED),
    )
    transport = trio.CancelScope()

    async def stop_on_signal() -> None:
        async for signum in signals:
            signalled.append(signal.Signals(signum).name)  # drain() says why it drains
            lines.close()  # stop accepting
            transport.deadline = trio.current_time() + grace_s + ANSWER_S + 0.5  # backstop behind drain()
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


async def _serve_http(ctx: Wiring, server: Server[Any], signals: AsyncIterator[int], stopping: Stopping) -> None:
    from .transport.http import serve_http

    shutdown = trio.Event()

    async def stop_on_signal() -> None:
        async for signum in signals:
            log.info("received %s: stopping", signal.Signals(signum).name)
            stopping.stop_within(ctx.config.shutdown_grace_s)  # a tool call past the grace is answered
            shutdown.set()  # hypercorn stops accepting, then gives in-flight calls the grace period
            return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(stop_on_signal)
        binds: list[str] = await nursery.start(partial(serve_http, answer_s=ANSWER_S), server, ctx.config, shutdown)
        log.info("ready: MCP over HTTP at %s, data dir %s", ", ".join(f"{b}/mcp" for b in binds), ctx.data.root)
        await shutdown.wait()
