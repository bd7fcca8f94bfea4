"""Calls still running when the shutdown grace ends are answered that the server is stopping.

Without this, the transport cancelled them with their connection (hypercorn's graceful
timeout over HTTP, the end of the SDK's read stream over stdio), so a client saw its
connection close with no answer: httpx's "peer closed connection without sending complete
message body", the SDK client's bare -32603 "Server returned an error response". A model
cannot tell that from a crash, nor that calling again later is all it takes.

:class:`Stopping` holds the cancel scope of every call in flight. :meth:`Stopping.stop_within`
(the transport's stop, at SIGTERM or stdin EOF) gives each of them, and every call that starts
after it, a deadline at the end of the grace. Each runs under :meth:`Stopping.finish`, which logs
a cut-off; :class:`~.runner.ToolRunner` answers a call so cancelled with an error result, and
``ctxtrio.surface.served.ServedSurface`` a ``resources/read``, ``prompts/get``,
``resources/list`` or ``completion/complete`` with an error response. The
transports keep their connections :data:`ANSWER_S` past the grace so that answer goes out.
What never finishes on its own (a listen stream) is ended as the stop begins (:meth:`Stopping.at_stop`).

Whether requests can still arrive after the stop depends on the transport, and :meth:`Stopping.stop_within`
is told: over HTTP connections stay open through the grace, so a request whose handler starts after the stop
may have been asked after it; stdio stops only once its reader has ended (EOF, or the signal closed it), so
every request it passed on was asked before the stop, however late its handler task gets to run.
"""

from __future__ import annotations

import enum
import logging
import math
from typing import TYPE_CHECKING, TypeVar

import trio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from types import TracebackType

__all__ = ["ANSWER_S", "CutOff", "Stopping"]

T = TypeVar("T")

log = logging.getLogger("ctxtrio.tools")

#: How long past the grace a transport keeps a connection, for the answer of a call cancelled at its end:
#: an ingest of a 16 MB file took up to 0.47 s to give way to a cancel (user24's sitting, five deadlines).
ANSWER_S = 2.0


class CutOff(enum.Enum):
    """What :meth:`Stopping.finish` gives for work the shutdown grace cut off (a value no work returns)."""

    CUT_OFF = "cut off"


class Stopping:
    """The deadline every tool call runs under: none until the server starts to stop."""

    def __init__(self) -> None:
        self._scopes: set[trio.CancelScope] = set()
        self._deadline = math.inf
        self._at_stop: list[Callable[[bool], None]] = []
        #: The grace the calls were given, once the server is stopping (:attr:`grace` words it).
        self._grace_s: float | None = None

    def bounded(self) -> _Bounded:
        """A ``with`` block run under the stop deadline; its scope says whether the deadline cut it off.

        The scope catches only its own cancellation: a cancel from outside (the client's
        ``notifications/cancelled``, the transport) passes through as before.
        """
        return _Bounded(self._scopes, trio.CancelScope(deadline=self._deadline))

    @property
    def grace(self) -> str:
        """The grace the calls were given, as the answers word it ("5 s")."""
        return f"{self._grace_s or 0:g} s"

    async def finish(self, name: str, work: Awaitable[T]) -> T | CutOff:
        """``work``'s value, run under the stop deadline (:meth:`bounded`), or :attr:`CutOff.CUT_OFF` when the
        shutdown grace ended first, logged once with ``name`` (a tool, or a request such as ``resources/read``)
        and how long the work ran. A cancel from outside passes through, as :meth:`bounded` says."""
        started = trio.current_time()
        with self.bounded():
            return await work
        log.warning(
            "%s cancelled after %.1f s: the shutdown grace (%s) ran out; answered that the server stops",
            name,
            trio.current_time() - started,
            self.grace,
        )
        return CutOff.CUT_OFF

    def not_done(self, subject: str, again: str) -> str:
        """The answer of a read the grace cut off: ``subject`` ("this call") did not finish; ``again`` is the next
        step ("call doc_search again"), to take once the server is back. A write says :meth:`not_finished`."""
        return f"not done: {self._cut(subject)}; {again} once the server is back"

    def not_finished(self, stored: str, again: str) -> str:
        """The answer of a write the grace cut off, which may have landed before the cut: ``stored`` ("what it
        stores") may or may not be there; ``again`` is the next step once the server is back ("look before ...")."""
        return f"not finished: {self._cut('this call')}, so {stored} may or may not have landed; once the server is back, {again}"

    def _cut(self, subject: str) -> str:
        return f"the server is stopping, and {subject} did not finish within its shutdown grace ({self.grace}, --shutdown-grace)"

    def at_stop(self, end: Callable[[bool], None]) -> None:
        """Call ``end(accepting)`` when the server starts to stop (once), with :meth:`stop_within`'s ``accepting``:
        for what never finishes on its own, such as a listen stream, which is ended then rather than cut off
        unanswered at the grace's end."""
        self._at_stop.append(end)

    def stop_within(self, grace_s: float, *, accepting: bool = True) -> None:
        """Cancel every call, running or still to start, that has not finished ``grace_s`` from now; the first
        time, call what :meth:`at_stop` was given.

        ``accepting`` says whether the transport may still take requests after this (HTTP, through its grace),
        or took its last one before it (stdio: its reader has ended), so that a request whose handler has not
        started yet was nonetheless asked before the stop."""
        first = self._grace_s is None
        self._grace_s = grace_s if self._grace_s is None else min(self._grace_s, grace_s)
        self._deadline = min(self._deadline, trio.current_time() + grace_s)
        for scope in self._scopes:
            scope.deadline = min(scope.deadline, self._deadline)
        if first:
            for end in self._at_stop:
                end(accepting)


class _Bounded:
    """A cancel scope registered with :class:`Stopping` while it is entered. A class, not a generator:
    its ``__exit__`` says it may swallow the exception (the scope's own cancellation), as the scope's does."""

    def __init__(self, scopes: set[trio.CancelScope], scope: trio.CancelScope) -> None:
        self._scopes = scopes
        self._scope = scope

    def __enter__(self) -> trio.CancelScope:
        self._scopes.add(self._scope)
        return self._scope.__enter__()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        self._scopes.discard(self._scope)
        return self._scope.__exit__(kind, exc, tb)
