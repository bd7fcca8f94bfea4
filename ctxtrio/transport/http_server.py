"""Hypercorn's trio worker loop, with open connections capped below the fd limit.

``hypercorn.trio.serve`` accepts every connection it can: its config has no connection
limit (``backlog`` only sizes the kernel's accept queue), and trio's ``serve_listeners``
answers EMFILE by sleeping and retrying. So 1,100 clients that each open a connection
and go quiet under ``ulimit -n 1024`` take every descriptor, and journals, the index and
the LLM client can no longer open anything. Hypercorn's ``read_timeout`` does not help
either: it bounds every socket read, including the wait while a long tool call streams
its answer and the client, rightly, sends nothing.

:func:`serve_capped` is hypercorn's ``worker_serve`` (lifespan, listeners, the
per-connection ``TCPServer``, the graceful shutdown deadline) with one change: a
``trio.CapacityLimiter`` taken before each ``accept`` and released when the connection
closes. At the cap, connections wait in the kernel's queue (TCP backpressure) until
one closes; hypercorn's ``keep_alive_timeout`` closes idle ones and the body deadline of
:class:`~ctxtrio.transport.http.Gate` closes those that stall mid-request.

Cancellation: cancelling the caller closes the listeners and cancels every connection
at once; setting ``shutdown`` instead stops accepting and gives open connections
``config.graceful_timeout`` before cancelling them.
"""

from __future__ import annotations

import errno
import logging
import resource
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING

import trio

from .quick_connection import quick_tcp_server
from .quick_stream import QuickStream

if TYPE_CHECKING:
    from hypercorn.config import Config as HypercornConfig
    from hypercorn.typing import Framework

__all__ = ["FD_RESERVE", "connection_cap", "serve_capped"]

log = logging.getLogger("ctxtrio.transport")

#: Descriptors kept for everything but HTTP connections: journals kept open (128),
#: SQLite connections of worker threads, the LLM client's pool, child processes' pipes.
FD_RESERVE = 384
MAX_CONNECTIONS = 1024
MIN_CONNECTIONS = 16
#: accept(2) errors that mean "out of resources for now" (as in trio.serve_listeners).
_CAPACITY_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
_RETRY_ACCEPT_S = 0.1


def connection_cap(soft_limit: int | None = None) -> int:
    """Connections served at once: the fd soft limit less :data:`FD_RESERVE`, within bounds."""
    if soft_limit is None:
        soft_limit, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft_limit == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS, soft_limit - FD_RESERVE))


async def serve_capped(
    app: Framework,
    config: HypercornConfig,
    *,
    shutdown: trio.Event,
    max_connections: int,
    answering: tuple[Callable[[], Awaitable[None]], float] | None = None,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``config.bind`` until ``shutdown`` is set; report the bound URLs.

    ``answering`` is (wait until no answer is owed, how long past the grace to wait for that):
    the connections get ``config.graceful_timeout``, then are cancelled once the wait
    returns, or when that much more has passed.
    """
    from hypercorn.trio.lifespan import Lifespan
    from hypercorn.trio.statsd import StatsdLogger
    from hypercorn.trio.worker_context import WorkerContext
    from hypercorn.typing import ConnectionState
    from hypercorn.utils import repr_socket_addr, wrap_app

    config.set_statsd_logger_class(StatsdLogger)
    wrapped = wrap_app(app, config.wsgi_max_body_size, "asgi")
    state: dict[str, object] = {}
    lifespan = Lifespan(wrapped, config, state)
    context = WorkerContext(None)
    slots = trio.CapacityLimiter(max_connections)
    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        async with trio.open_nursery() as connections:
            listeners: list[trio.SocketListener] = []
            binds: list[str] = []
            for sock in config.create_sockets().insecure_sockets:
                sock.listen(config.backlog)
                listeners.append(trio.SocketListener(trio.socket.from_stdlib_socket(sock)))
                binds.append(f"http://{repr_socket_addr(sock.family, sock.getsockname())}")
            handler = partial(quick_tcp_server, wrapped, config, context, ConnectionState(state.copy()))
            task_status.started(binds)
            try:
                async with trio.open_nursery() as accepting:
                    for listener in listeners:
                        accepting.start_soon(_accept, listener, slots, connections, handler)
                    await shutdown.wait()
                    accepting.cancel_scope.cancel()
            finally:
                await context.terminated.set()
                grace_end = trio.current_time() + config.graceful_timeout
                connections.cancel_scope.deadline = grace_end
                if answering is not None:
                    owed, answer_s = answering
                    connections.cancel_scope.deadline = grace_end + answer_s
                    lifespan_nursery.start_soon(_close_when_answered, connections.cancel_scope, grace_end, owed)
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()


async def _close_when_answered(
    connections: trio.CancelScope, grace_end: float, owed: Callable[[], Awaitable[None]]
) -> None:
    """At the grace's end, cancel the connections as soon as no answer is owed (the deadline bounds the wait)."""
    await trio.sleep_until(grace_end)
    await owed()
    connections.cancel()


Handler = Callable[[trio.abc.HalfCloseableStream], Awaitable[None]]


async def _accept(
    listener: trio.SocketListener, slots: trio.CapacityLimiter, connections: trio.Nursery, handler: Handler
) -> None:
    """Accept while a slot is free; each connection holds its slot until it closes."""
    async with listener:
        while True:
            token = object()
            await slots.acquire_on_behalf_of(token)
            try:
                stream = await listener.accept()
            except OSError as exc:
                slots.release_on_behalf_of(token)
                if exc.errno not in _CAPACITY_ERRNOS:
                    raise
                log.warning("accept failed (%s); retrying in %g s", errno.errorcode[exc.errno], _RETRY_ACCEPT_S)
                await trio.sleep(_RETRY_ACCEPT_S)
                continue
            except BaseException:
                slots.release_on_behalf_of(token)
                raise
            connections.start_soon(_connection, QuickStream(stream), handler, slots, token)


async def _connection(
    stream: trio.abc.HalfCloseableStream, handler: Handler, slots: trio.CapacityLimiter, token: object
) -> None:
    """Serve one connection; its failure closes it and is logged, it never stops the server.

    hypercorn lets some protocol errors out of a connection (h11's LocalProtocolError
    when the SDK abandons an SSE stream whose session a DELETE closed meanwhile, and
    hypercorn then tries to answer 500 inside the open body; trio's BusyResourceError when
    a peer vanishes while an error answer is sent): in the shared nursery that
    would cancel every other connection and end the process.
    """
    try:
        await handler(stream)
    except Exception as exc:  # the connection boundary: one connection fails, not the server
        log.warning("HTTP connection failed and was closed: %s", _summary(exc))
        log.debug("HTTP connection failure", exc_info=exc)
    finally:
        slots.release_on_behalf_of(token)
        await trio.aclose_forcefully(stream)


def _summary(exc: BaseException) -> str:
    """The innermost error of ``exc`` (groups unwrapped), as ``Type: message``."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
