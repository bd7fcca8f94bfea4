"""Who hears about changes and warnings: the connections, their subscriptions and log levels.

Two eras of the protocol deliver server events differently, and :class:`Hub` serves both:

* Handshake revisions (up to 2025-11-25): a client calls ``resources/subscribe`` and
  ``logging/setLevel`` on its connection; notifications go out on that connection's
  standalone channel (stdio: the pipe; Streamable HTTP: the GET stream). Each connection
  is remembered from its first request until it closes (``Connection.exit_stack``).
* 2026-07-28: a client opens a ``subscriptions/listen`` stream naming what it wants; the
  SDK's ``ListenHandler`` serves it from an in-process bus this hub publishes to. The
  URIs named by open streams are counted here, so the data-dir watcher knows them.

Either way a subscription is registered, then the hub awaits its ``promise`` (the watcher
stamps what the URIs name now: :meth:`ctxtrio.surface.watch.Journals.promise`), then it
is acknowledged: every change after the acknowledgement is announced, including one made
before the watcher's next look.

Warnings (WARNING and above on the ``ctxtrio`` loggers) go to the handshake connections
that called ``logging/setLevel`` at or below their level, as ``notifications/message``
with the logger name and the message only, secrets masked, cut to
:data:`MAX_LOG_CHARS`, at most :data:`LOG_BURST` at once and :data:`LOG_PER_S` a second
after that (what is dropped is counted in the next message). 2026-07-28 has no
connection-wide log channel (its logging is opted into per request), so nothing is sent
there.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

import trio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from mcp.server.connection import Connection
    from mcp.server.context import ServerRequestContext
    from mcp.server.session import ServerSession
    from mcp.server.subscriptions import ListenHandler
    from mcp.types import SubscriptionsListenRequestParams, SubscriptionsListenResult

__all__ = ["LOG_BURST", "LOG_PER_S", "MAX_LOG_CHARS", "MAX_SUBSCRIPTIONS", "Hub"]

log = logging.getLogger("ctxtrio.transport")

#: URIs one connection may subscribe to (further subscriptions are refused).
MAX_SUBSCRIPTIONS = 1_000
MAX_LOG_CHARS = 300
LOG_BURST = 10
LOG_PER_S = 2.0
#: How long one notification may wait on one connection's channel before it is dropped.
SEND_TIMEOUT_S = 1.0
_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_QUEUE = 64
#: Credentials as they appear in URLs, headers and exception texts.
_SECRETISH = re.compile(
    r"(?i)(bearer\s+|authorization[:=]\s*|api[_-]?key[\"']?\s*[:=]\s*[\"']?|token[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]+"
)


def _mcp_level(levelno: int) -> str:
    return "critical" if levelno >= logging.CRITICAL else "error" if levelno >= logging.ERROR else "warning"


def connection_of(session: ServerSession) -> Connection:
    """The connection a request arrived on (the SDK keeps it on the per-request session)."""
    return session._connection  # private in the SDK; tests/surface/test_notify.py fails if it moves


class Hub:
    """The connections of one server, what each subscribed to, and the bus of listen streams."""

    def __init__(
        self, *, secrets: Sequence[str] = (), promise: Callable[[Sequence[str]], Awaitable[None]] | None = None
    ) -> None:
        from mcp.server.subscriptions import InMemorySubscriptionBus

        self._bus = InMemorySubscriptionBus()
        #: Awaited once URIs are subscribed to and before that is acknowledged (the state they were promised).
        self._promise = promise
        self._connections: dict[int, Connection] = {}
        self._subscriptions: dict[int, set[str]] = {}
        self._levels: dict[int, int] = {}
        self._listened: Counter[str] = Counter()
        self._secrets = [secret for secret in secrets if secret]
        self._send, self._receive = trio.open_memory_channel[tuple[int, str, str]](_QUEUE)
        self._token: trio.lowlevel.TrioToken | None = None
        self._dropped = 0
        #: Set by :meth:`end_listens`: the server is stopping; a listen stream that starts now is ended at once.
        self._ending = False
        #: ... or, when requests may still arrive after the stop (:meth:`end_listens`'s ``accepting``), refused.
        self._refusing = False
        self.listen = self._listen_handler()

    # -- connections ----------------------------------------------------------------

    def seen(self, session: ServerSession) -> Connection | None:
        """Remember the (handshake-era) connection ``session`` belongs to; None for 2026-07-28."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        connection = connection_of(session)
        if connection.protocol_version in MODERN_PROTOCOL_VERSIONS or not connection.has_standalone_channel:
            return None
        key = id(connection)
        if key not in self._connections:
            self._connections[key] = connection
            connection.exit_stack.callback(self._forget, key)
        return connection

    def _forget(self, key: int) -> None:
        self._connections.pop(key, None)
        self._subscriptions.pop(key, None)
        self._levels.pop(key, None)

    async def subscribe(self, session: ServerSession, uri: str) -> bool:
        """Subscribe the connection of ``session`` to ``uri``; False when it holds too many already.

        Returns once ``uri``'s state now is what the watcher compares with (the ``promise``), so the
        caller acknowledges a subscription that hears of every change after it.
        """
        connection = self.seen(session)
        if connection is None:
            return True  # nothing to deliver on: the subscription is honoured and never fires
        uris = self._subscriptions.setdefault(id(connection), set())
        if uri not in uris and len(uris) >= MAX_SUBSCRIPTIONS:
            return False
        uris.add(uri)
        if self._promise is not None:
            await self._promise([uri])
        return True

    def unsubscribe(self, session: ServerSession, uri: str) -> None:
        self._subscriptions.get(id(connection_of(session)), set()).discard(uri)

    def set_level(self, session: ServerSession, level: str) -> None:
        """Send this connection warnings at ``level`` or above (never below WARNING)."""
        connection = self.seen(session)
        if connection is not None:
            self._levels[id(connection)] = _LEVELS.index(level)

    # -- what the watcher asks and tells ------------------------------------------

    def watched(self) -> frozenset[str]:
        """Every URI a connection subscribed to or an open listen stream names."""
        uris: set[str] = set(self._listened)
        for subscribed in self._subscriptions.values():
            uris |= subscribed
        return frozenset(uris)

    async def updated(self, uri: str) -> None:
        from mcp.server.subscriptions import ResourceUpdated

        for key, uris in list(self._subscriptions.items()):
            connection = self._connections.get(key)
            if connection is not None and uri in uris:
                with trio.move_on_after(SEND_TIMEOUT_S):  # a client that stopped reading holds up no one else
                    await connection.send_resource_updated(uri)
        await self._bus.publish(ResourceUpdated(uri=uri))

    async def list_changed(self) -> None:
        from mcp.server.subscriptions import ResourcesListChanged

        for connection in list(self._connections.values()):
            with trio.move_on_after(SEND_TIMEOUT_S):
                await connection.send_resource_list_changed()
        await self._bus.publish(ResourcesListChanged())

    def end_listens(self, accepting: bool) -> None:
        """End every listen stream now, gracefully: the server is stopping.

        Each stream's handler sends its ``SubscriptionsListenResult`` as the last frame (the
        SDK's :meth:`ListenHandler.close`, the spec's graceful close), so its client knows it
        ended on purpose. Left open, a stream was a request in flight that never finishes: the
        shutdown waited the grace and the moment kept for answers for it, then cut it off, which
        the SDK client raises as ``SubscriptionLost``.

        A listen whose handler starts after this was asked before the stop unless the transport is
        still ``accepting`` requests (HTTP, through its grace), so it is ended the same way: its
        acknowledgement, then its result. Only while accepting is it refused, as one asked after the
        stop may be. (Over stdio the reader has ended before the stop, yet a listen it read just
        before EOF may not have reached its handler: refused, its client saw an error for a request
        the server had taken, 2 runs in 5 at load 5.)
        """
        self._ending = True
        self._refusing = accepting
        self.listen.close()

    def _listen_handler(self) -> ListenHandler:
        from anyio.streams.memory import MemoryObjectSendStream
        from mcp import types
        from mcp.server.subscriptions import ListenHandler, ServerEvent
        from mcp.shared.exceptions import MCPError

        listened = self._listened
        hub = self

        class EndedOnceStopping(set[MemoryObjectSendStream[ServerEvent]]):
            """The SDK handler's open streams (``ListenHandler._streams``, private: tests/surface/test_stopping.py fails
            if it moves), where a stream registered once the server is stopping is closed at once, as
            :meth:`ListenHandler.close` closes those open then: its handler sends its acknowledgement, then its
            result. (The handler registers it before its first checkpoint, so nothing else runs in between.)"""

            def add(self, stream: MemoryObjectSendStream[ServerEvent]) -> None:
                super().add(stream)
                if hub._ending:
                    stream.close()

        class CountingListen(ListenHandler):
            """The SDK's handler, counting the URIs of the streams open now."""

            def __init__(self) -> None:
                super().__init__(hub._bus)
                self._streams = EndedOnceStopping()

            async def __call__(
                self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams
            ) -> SubscriptionsListenResult:
                if hub._ending and hub._refusing:
                    raise MCPError(types.INTERNAL_ERROR, "the server is stopping: listen again once it is back")
                uris = list(params.notifications.resource_subscriptions or ())[:MAX_SUBSCRIPTIONS]
                listened.update(uris)
                try:
                    if hub._promise is not None and uris:
                        await hub._promise(uris)  # before super() sends the acknowledgement
                    return await super().__call__(ctx, params)
                finally:
                    listened.subtract(uris)
                    for uri in uris:
                        if listened[uri] <= 0:
                            del listened[uri]

        return CountingListen()

    # -- warnings -------------------------------------------------------------------

    async def run_logs(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Forward warnings to the connections that asked, until cancelled."""
        self._token = trio.lowlevel.current_trio_token()
        handler = _Forward(self)
        root = logging.getLogger("ctxtrio")
        root.addHandler(handler)
        try:
            task_status.started()
            allowance, last = float(LOG_BURST), trio.current_time()
            async for levelno, name, message in self._receive:
                now = trio.current_time()
                allowance = min(float(LOG_BURST), allowance + (now - last) * LOG_PER_S)
                last = now
                if allowance < 1:
                    self._dropped += 1
                    continue
                allowance -= 1
                if self._dropped:
                    message += f" ({self._dropped} earlier warning(s) not sent: rate limit)"
                    self._dropped = 0
                await self._send_log(levelno, name, message)
        finally:
            root.removeHandler(handler)
            self._token = None

    def offer(self, record: logging.LogRecord) -> None:
        """Queue a warning for the forwarder (any thread); dropped when nobody asked or the queue is full."""
        token = self._token
        if token is None or not self._levels or record.name.startswith("mcp"):
            return
        item = (record.levelno, record.name, self._clean(record))

        def put() -> None:
            try:
                self._send.send_nowait(item)
            except (trio.WouldBlock, trio.ClosedResourceError):
                self._dropped += 1

        try:
            token.run_sync_soon(put)
        except trio.RunFinishedError:
            pass

    def _clean(self, record: logging.LogRecord) -> str:
        try:
            text = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: say so, send nothing of it
            text = "(unformattable log message)"
        for secret in self._secrets:
            text = text.replace(secret, "***")
        text = _SECRETISH.sub(r"\1***", text)
        return text if len(text) <= MAX_LOG_CHARS else text[: MAX_LOG_CHARS - 1] + "…"

    async def _send_log(self, levelno: int, name: str, message: str) -> None:
        level = _mcp_level(levelno)
        rank = _LEVELS.index(level)
        for key, wanted in list(self._levels.items()):
            connection = self._connections.get(key)
            if connection is not None and rank >= wanted:
                with trio.move_on_after(SEND_TIMEOUT_S):
                    await connection.notify("notifications/message", {"level": level, "logger": name, "data": message})


class _Forward(logging.Handler):
    def __init__(self, hub: Hub) -> None:
        super().__init__(logging.WARNING)
        self._hub = hub

    def emit(self, record: logging.LogRecord) -> None:
        self._hub.offer(record)
