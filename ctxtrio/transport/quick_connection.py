"""hypercorn's per-connection ``TCPServer`` with fewer event-loop turns on each request.

Under a storm of large uploads every schedule point on a small request's path (a
``context_status``) costs it one whole round of everybody else's steps (see
:mod:`.quick_stream`). hypercorn's trio ``TCPServer`` takes two ``trio.Lock``s that are
almost never contended, and trio's ``Lock.acquire`` yields even when the lock is free:

* ``send_lock``, around every write: the head, the body and the end of each answer;
* its idle task's lock (``TrioSingleTask``), when a request arrives (the keep-alive
  timer is stopped) and when the answer is done (the timer is restarted, through
  ``nursery.start``, which also waits for the new task to report that it started).

:func:`quick_tcp_server` builds hypercorn's ``TCPServer`` and swaps in a send lock taken
through :class:`~ctxtrio._locks.Held` (a free lock without yielding; a held one is waited
for as trio's) and :class:`QuickSingleTask` (restarts the timer with ``start_soon`` under a
cancel scope it made itself: nothing to wait for, so no lock is needed; it still checks
cancellation first). The keep-alive timeout, the order of writes and everything else are
hypercorn's.

One more change: closing the connection is shielded. Once the server is stopping, hypercorn
closes a connection as soon as an answer on it ends (``H11Protocol._maybe_recycle``), from
inside the app's last ``send``; the SDK answers in a task group whose ``watch_disconnect``
task cancels it on the ``http.disconnect`` that the same end of the stream delivers
(``mcp/server/_streamable_http_modern.py``). So ``TCPServer._close`` was cancelled at its
first checkpoint (``send_eof``), before ``aclose``: the socket stayed open and read on, and
the client's next request on it, sent after the answer, waited unanswered to the end of the
shutdown grace (5 s) and then lost its connection ("Server disconnected without sending a
response", found with SIGTERM under 4 SDK clients calling in a loop). A close is two system
calls and two checkpoints; nothing in it waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import trio

from .._locks import Held

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from hypercorn.config import Config
    from hypercorn.trio.tcp_server import TCPServer
    from hypercorn.trio.worker_context import WorkerContext
    from hypercorn.typing import AppWrapper, LifespanState

__all__ = ["QuickSingleTask", "Spawner", "quick_tcp_server"]


class Spawner(Protocol):
    """What a keep-alive timer needs of hypercorn's trio ``TaskGroup``: a task started in its nursery."""

    def spawn(self, func: Callable[..., Awaitable[object]], *args: object) -> None: ...


class QuickSingleTask:
    """hypercorn's ``SingleTask`` (one keep-alive timer a connection) without a lock or a wait.

    ``restart`` cancels the running timer and starts the next with ``start_soon`` inside a
    cancel scope made here, so a ``stop`` right after cancels it even before it runs.
    Neither awaits anything, so two calls cannot interleave and no lock is needed.
    """

    __slots__ = ("_scope",)

    def __init__(self) -> None:
        self._scope: trio.CancelScope | None = None

    async def restart(self, task_group: Spawner, action: Callable[[], Awaitable[None]]) -> None:
        """Cancel the timer running, if any, and start ``action`` in ``task_group`` (its nursery)."""
        await trio.lowlevel.checkpoint_if_cancelled()
        self._cancel()
        scope = self._scope = trio.CancelScope()
        task_group.spawn(_under, scope, action)

    async def stop(self) -> None:
        """Cancel the timer running, if any."""
        await trio.lowlevel.checkpoint_if_cancelled()
        self._cancel()
        self._scope = None

    def _cancel(self) -> None:
        if self._scope is not None:
            self._scope.cancel()


async def _under(scope: trio.CancelScope, action: Callable[[], Awaitable[None]]) -> None:
    with scope:
        await action()


def quick_tcp_server(
    app: AppWrapper,
    config: Config,
    context: WorkerContext,
    state: LifespanState,
    stream: trio.abc.HalfCloseableStream,
) -> TCPServer:
    """hypercorn's ``TCPServer`` with a :class:`~ctxtrio._locks.Held` send lock and :class:`QuickSingleTask`."""
    from hypercorn.trio.tcp_server import TCPServer

    # hypercorn types the stream as an SSLStream and tells a plain one apart at run time.
    server = TCPServer(app, config, context, state, stream)  # type: ignore[arg-type]
    # Both are used only through ``async with`` / restart / stop, which these provide.
    server.send_lock = Held(trio.Lock())  # type: ignore[assignment]
    server.idle_task = QuickSingleTask()  # type: ignore[assignment]
    close = server._close

    async def close_shielded() -> None:
        """hypercorn's close, finished even when the task that asked for it is being cancelled."""
        with trio.CancelScope(shield=True):
            await close()

    server._close = close_shielded  # type: ignore[method-assign]
    return server
