"""MCP over Streamable HTTP, served by hypercorn's trio worker inside our nursery tree.

The SDK's ``run_streamable_http_async`` uses uvicorn, which cannot run under trio, so we
take its ASGI app (``streamable_http_app()``) and serve it with ``hypercorn.trio.serve``.
In front of it sits :class:`Gate`, a small ASGI layer that:

* answers ``GET /health`` with status and version;
* serves MCP at ``/mcp`` and at ``/`` (configs written for the original keep working);
* rejects a foreign ``Host`` or ``Origin`` (DNS rebinding) with 403;
* requires ``Authorization: Bearer <token>`` on every request when a token is set (401);
* refuses a declared body larger than the limit (413) before reading it, and a body
  without a declared length (chunked) the moment it passes the limit;
* reads every POST body itself before the SDK sees it, under a minimum rate: each read
  must bring data within ``body_timeout_s``, and after that grace the bytes received
  must keep up with :data:`MIN_BODY_BYTES_PER_S` (each read is due by the start plus
  ``body_timeout_s`` plus the bytes so far at that rate); otherwise 408. A client
  trickling 100 bytes every 5 s under a large declared length is cut after about
  ``body_timeout_s``, not after its declared size at that rate.
  A client that declares a body and goes silent therefore gives back its connection
  and its share of the buffer budget (hypercorn bounds only the wait for headers,
  with ``keep_alive_timeout``);
* lets at most ``large_slots`` requests with a large body (a document being ingested)
  into the SDK at once, until the SDK has read the body (the call that follows, a long
  ingest, holds no slot: the document service bounds those), and parses each such body
  in a worker thread first (one at a time), which the SDK is handed instead of parsing
  it on the event loop (:mod:`ctxtrio._sdk.bodies`). The others are read into
  memory first, up to
  ``buffer_bytes`` in all, and wait for a slot; past that budget their bodies are not
  read at all, so their clients wait in TCP flow control. Memory and event-loop time
  spent on parsing megabytes of JSON stay bounded however many clients ingest at once,
  and small calls (``context_status``) are never queued behind them.

Connections are capped below the fd limit (:mod:`.http_server`).

Shutdown: when ``shutdown`` is set, hypercorn stops accepting and gives in-flight
requests ``grace_s`` before cancelling them; then this returns.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

import trio

from .._sdk import bodies, http_app
from .._setting import is_loopback_host
from .._version import __version__
from .http_server import FD_RESERVE, connection_cap, serve_capped
from .session_race import session_race_logs_quiet

if TYPE_CHECKING:
    from hypercorn.typing import Framework
    from mcp.server.lowlevel import Server

    from .._config import Config

__all__ = ["ByteBudget", "Gate", "body_limit_bytes", "serve_http"]

log = logging.getLogger("ctxtrio.transport")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
#: The slowest a request body may arrive on average (after ``body_timeout_s`` of grace).
MIN_BODY_BYTES_PER_S = 256 * 1024


def body_limit_bytes(config: Config) -> int:
    """Largest request body: the biggest document as escaped JSON, plus room for the envelope."""
    return config.max_ingest_chars * 6 + (1 << 20)


class Gate:
    """ASGI middleware: health, path alias, Host/Origin checks, bearer token, body limit."""

    #: A body at least this large (or of unknown length) takes a large-request slot.
    LARGE_BODY_BYTES = 256 * 1024

    def __init__(
        self,
        app: ASGIApp,
        *,
        host: str,
        token: str | None,
        max_body_bytes: int,
        large_slots: int = 4,
        buffer_bytes: int = 512 << 20,
        body_timeout_s: float = 10.0,
    ) -> None:
        self._app = app
        self._body_timeout_s = body_timeout_s
        self._large = trio.CapacityLimiter(large_slots)
        # One large body parsed at a time: parsing holds the GIL, so more threads would only
        # take turns with each other and with the event loop.
        self._parsing = trio.CapacityLimiter(1)
        self._buffer = ByteBudget(buffer_bytes)
        self._token = token.encode() if token else None
        self._max_body_bytes = max_body_bytes
        #: POST requests not yet answered (a tool call's SSE answer included); shutdown waits for them.
        self._posts = 0
        self._no_posts = trio.Event()
        self._no_posts.set()
        self._hosts = set(_LOOPBACK_NAMES)
        if not is_loopback_host(host) and host not in ("0.0.0.0", "::"):
            self._hosts.add(host)
        # Bound to every interface, any Host may be legitimate; the token protects it.
        self._any_host = host in ("0.0.0.0", "::")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        problem = self._check(headers)
        if problem is not None:
            status, message = problem
            await _respond(send, status, {"error": message})
            return
        path = scope["path"]
        if path == "/health":
            await _respond(send, 200, {"status": "ok", "name": "ctxtrio", "version": __version__})
            return
        if path in ("/", ""):
            scope = dict(scope, path="/mcp", raw_path=b"/mcp")
        elif path.rstrip("/") != "/mcp":  # the SDK's bare "Not Found" names neither the server nor its endpoint
            where = f"nothing at {path[:200]}: ctxtrio serves MCP at /mcp (and at /), and GET /health"
            await _respond(send, 404, {"error": where})
            return
        length = headers.get("content-length")
        if scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        self._posts += 1
        self._no_posts = trio.Event() if self._posts == 1 else self._no_posts
        try:
            await self._post(scope, receive, send, length)
        finally:
            self._posts -= 1
            if self._posts == 0:
                self._no_posts.set()

    async def posts_done(self) -> None:
        """Return once no POST is being answered (idle GET streams do not count)."""
        while self._posts:
            await self._no_posts.wait()

    async def _post(self, scope: Scope, receive: Receive, send: Send, length: str | None) -> None:
        size = int(length) if length is not None and length.isdigit() else None
        if _is_large(length, self.LARGE_BODY_BYTES):
            await self._queue_large(scope, receive, send, size)
            return
        messages = await self._read_body(receive, send, size)
        if messages is not None:
            await self._app(scope, _replay(messages, receive), send)

    async def _queue_large(self, scope: Scope, receive: Receive, send: Send, size: int | None) -> None:
        """Buffer the body within the byte budget, then wait for a slot to hand it on."""
        async with self._buffer.reserve(size if size is not None else self._max_body_bytes):
            messages = await self._read_body(receive, send, size)
            if messages is None:
                return
            slot = object()
            await self._large.acquire_on_behalf_of(slot)
            held = True

            def release() -> None:
                # The SDK has the whole body and parses it before its next checkpoint:
                # the call itself (a long ingest) no longer holds a slot.
                nonlocal held
                if held:
                    held = False
                    self._large.release_on_behalf_of(slot)

            try:
                # Parsed off the event loop; the SDK is handed the result (.._sdk.bodies).
                # The parse's pair goes to given() unnamed, and the pieces are let go, so the joined
                # body's last reference is given()'s (the SDK is handed a stand-in for a parsed one).
                pieces = [m.pop("body", b"") for m in messages]
                del messages
                with bodies.given(*await bodies.parse_in_thread(pieces, self._parsing)) as body:
                    whole: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
                    del body
                    await self._app(scope, _replay(whole, receive, on_end=release), send)
            finally:
                release()

    async def _read_body(self, receive: Receive, send: Send, size: int | None) -> list[Message] | None:
        """The body's messages, or None after answering 413 (too large) or 408 (too slow).

        Also None, without an answer, when the client disconnected meanwhile.
        """
        started = trio.current_time()
        messages: list[Message] = []
        total = 0
        while True:
            due = min(
                trio.current_time() + self._body_timeout_s,
                started + self._body_timeout_s + total / MIN_BODY_BYTES_PER_S,
            )
            with trio.move_on_at(due) as late:
                message = await receive()
            if late.cancelled_caught:
                break
            if message["type"] != "http.request":
                return None  # http.disconnect: nobody to answer
            messages.append(message)
            total += len(message.get("body", b""))
            if total > self._max_body_bytes:
                await _respond(send, 413, {"error": f"request body larger than {self._max_body_bytes} bytes"})
                return None
            if not message.get("more_body", False):
                return messages
        log.info(
            "request body stalled or too slow: %d bytes in %.1f s, answered 408", total, trio.current_time() - started
        )
        await _respond(
            send,
            408,
            {
                "error": f"request body not received in time (after {self._body_timeout_s:g} s, "
                f"at least {MIN_BODY_BYTES_PER_S // 1024} KB/s)"
            },
        )
        return None

    def _check(self, headers: dict[str, str]) -> tuple[int, str] | None:
        if self._token is not None:
            given = headers.get("authorization", "")
            scheme, _, credential = given.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(credential.strip().encode(), self._token):
                return 401, "missing or wrong bearer token"
        if not self._any_host and _hostname(headers.get("host", "")) not in self._hosts:
            return 403, "Host header not allowed"
        origin = headers.get("origin")
        if origin and not self._any_host and _hostname(origin.split("://", 1)[-1]) not in self._hosts:
            return 403, "Origin not allowed"
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self._max_body_bytes:
            return 413, f"request body larger than {self._max_body_bytes} bytes"
        return None


class ByteBudget:
    """Bytes that requests may hold in memory at once; ``reserve`` waits for room.

    A request larger than the whole budget still gets it, alone, so none waits forever.
    """

    def __init__(self, total_bytes: int) -> None:
        self._total = total_bytes
        self._used = 0
        self._changed = trio.Condition()

    @asynccontextmanager
    async def reserve(self, size: int) -> AsyncIterator[None]:
        async with self._changed:
            while self._used and self._used + size > self._total:
                await self._changed.wait()
            self._used += size
        try:
            yield
        finally:
            self._used -= size
            with trio.CancelScope(shield=True):
                async with self._changed:
                    self._changed.notify_all()


def _replay(messages: list[Message], receive: Receive, *, on_end: Callable[[], None] | None = None) -> Receive:
    """A ``receive`` that returns ``messages`` first, then reads on (for ``http.disconnect``).

    ``on_end`` is called when the last of ``messages`` is handed over.
    """
    pending = iter(messages)
    left = len(messages)

    async def replayed() -> Message:
        nonlocal left
        following = next(pending, None)
        if following is None:
            return await receive()
        left -= 1
        if left == 0 and on_end is not None:
            on_end()
        return following

    return replayed


def _is_large(length: str | None, threshold: int) -> bool:
    """A declared length at or over ``threshold``, or no declared length (chunked upload)."""
    return length is None or not length.isdigit() or int(length) >= threshold


def _hostname(authority: str) -> str:
    """``host`` of ``host[:port]`` (IPv6 in brackets kept), lowercased."""
    authority = authority.strip().lower().split("/", 1)[0]
    if authority.startswith("["):
        return authority[: authority.find("]") + 1]
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


async def _respond(send: Send, status: int, body: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if status == 401:  # RFC 6750, section 3: a 401 names the scheme a client must use
        headers.append((b"www-authenticate", b'Bearer realm="ctxtrio"'))
    if status >= 400:
        # Refusals are sent before the body is read, and the server then closes the
        # connection; saying so (RFC 9112, section 9.6) stops a keep-alive client from
        # sending its next request down a connection that is going away.
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


async def serve_http(
    server: Server[Any],
    config: Config,
    shutdown: trio.Event,
    *,
    answer_s: float = 0.0,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``server`` over HTTP until ``shutdown`` is set.

    Reports the bound URLs (``http://127.0.0.1:PORT``) through ``task_status`` once the
    socket listens, so ``--port 0`` callers learn the port. At the end of the shutdown
    grace, connections are closed once no POST is being answered, at most ``answer_s``
    later: the time a call the grace cut off has to send its answer (the server's tools
    stop their calls at the grace itself); an idle GET stream does not keep them open.
    """
    from hypercorn.config import Config as HypercornConfig

    limit = body_limit_bytes(config)
    app = http_app(
        server,
        host=config.http_host,
        max_body_bytes=limit,
        max_sessions=config.http_max_sessions,
        session_idle_s=config.http_session_idle_s,
    )
    hypercorn_config = HypercornConfig()
    host = f"[{config.http_host}]" if ":" in config.http_host else config.http_host
    hypercorn_config.bind = [f"{host}:{config.http_port}"]
    hypercorn_config.graceful_timeout = config.shutdown_grace_s
    hypercorn_config.accesslog = None
    hypercorn_config.errorlog = logging.getLogger("hypercorn.error")
    gate = Gate(
        app,
        host=config.http_host,
        token=config.http_token,
        max_body_bytes=limit,
        body_timeout_s=config.http_body_timeout_s,
    )
    # hypercorn types ASGI apps with its own TypedDict events; Gate speaks plain ASGI dicts.
    framework = cast("Framework", gate)
    cap = connection_cap()
    log.info("serving at most %d HTTP connections at once (fd limit less %d)", cap, FD_RESERVE)
    with session_race_logs_quiet():
        await serve_capped(
            framework,
            hypercorn_config,
            shutdown=shutdown,
            max_connections=cap,
            answering=(gate.posts_done, answer_s),
            task_status=task_status,
        )
