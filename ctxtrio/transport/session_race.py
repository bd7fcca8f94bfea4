"""One log line, not three tracebacks, when a request races the DELETE of its own session.

A Streamable HTTP client may end its session (``DELETE /mcp``) while one of its POSTs is
still being handed to that session: a ``tools/call`` sent beside the DELETE, or the
``notifications/initialized`` the SDK processes after answering it 202. The SDK (mcp
2.3, ``mcp/server/streamable_http.py``) then finds the session's streams closed: its
``writer.send`` raises ``anyio.ClosedResourceError`` and it logs that with
``logger.exception`` ("SSE response error", "Error handling POST request"). After a 202
already sent it also tries to answer 500, which hypercorn refuses with
``UnexpectedMessageError`` and logs again with both tracebacks ("Error in ASGI
Framework"). Nothing is wrong with the server: the client gave up the session, and with
it the answer. The connection itself is closed by :mod:`.http_server` (one warning line).

:func:`session_race_logs_quiet` filters the two loggers while HTTP is served: the SDK's
record of a closed-session error becomes one INFO line without a traceback, and
hypercorn's follow-up about the same request is dropped. Every other record, including
any other exception from the same places, passes unchanged.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import TYPE_CHECKING

import anyio

from .._errors import leaves

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["SDK_LOGGER", "session_race_logs_quiet"]

SDK_LOGGER = "mcp.server.streamable_http"
HYPERCORN_LOGGER = "hypercorn.error"
_CLOSED = (anyio.ClosedResourceError, anyio.EndOfStream)


def _closed_session(exc: BaseException) -> bool:
    """``exc`` is (a group of nothing but) the closed streams of a terminated session."""
    found = leaves(exc)
    return bool(found) and all(isinstance(leaf, _CLOSED) for leaf in found)


def _caused_by_closed_session(exc: BaseException) -> bool:
    """Some exception ``exc`` was raised while handling (its context chain) is a closed session."""
    seen: set[int] = set()
    cause = exc.__context__
    while cause is not None and id(cause) not in seen:
        if _closed_session(cause):
            return True
        seen.add(id(cause))
        cause = cause.__context__
    return False


class SessionRaceFilter(logging.Filter):
    """Turns the SDK's closed-session tracebacks into one line and drops hypercorn's echo of them."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None:
            return True
        if record.name == SDK_LOGGER and _closed_session(exc):
            said = record.getMessage()
            record.msg = "%s: the session was terminated (DELETE) while this request was handed to it; dropped"
            record.args = (said,)
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
            return True
        return not (record.name == HYPERCORN_LOGGER and _caused_by_closed_session(exc))


@contextmanager
def session_race_logs_quiet() -> Iterator[None]:
    """Filter the SDK's and hypercorn's error loggers for the duration (see the module docstring)."""
    race = SessionRaceFilter()
    loggers = [logging.getLogger(SDK_LOGGER), logging.getLogger(HYPERCORN_LOGGER)]
    for logger in loggers:
        logger.addFilter(race)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(race)
