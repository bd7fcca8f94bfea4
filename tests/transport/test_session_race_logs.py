"""The SDK's and hypercorn's tracebacks for a request racing its session's DELETE become one line."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
from hypercorn.protocol.http_stream import ASGIHTTPState
from hypercorn.utils import UnexpectedMessageError

from ctxtrio.transport.session_race import HYPERCORN_LOGGER, SDK_LOGGER, session_race_logs_quiet

if TYPE_CHECKING:
    import pytest


async def _closed_stream_error() -> anyio.ClosedResourceError:
    """The error the SDK's ``writer.send`` raises once a DELETE has closed the session's stream."""
    send, receive = anyio.create_memory_object_stream[int](1)
    await send.aclose()
    await receive.aclose()
    try:
        await send.send(1)
    except anyio.ClosedResourceError as exc:
        return exc
    raise AssertionError("a closed stream accepted a message")


def _log(name: str, message: str, exc: BaseException) -> None:
    logging.getLogger(name).error(message, exc_info=exc)


async def test_closed_session_errors_become_one_info_line(caplog: pytest.LogCaptureFixture) -> None:
    """A closed-session error (bare or in a group) is one INFO line with no traceback; hypercorn's echo is dropped."""
    closed = await _closed_stream_error()
    try:
        try:
            raise closed
        except anyio.ClosedResourceError:
            raise UnexpectedMessageError(
                ASGIHTTPState.CLOSED, "http.response.start"
            )  # implicitly chained, as hypercorn raises it
    except UnexpectedMessageError as exc:
        echo = exc
    caplog.set_level(logging.INFO)
    with session_race_logs_quiet():
        _log(SDK_LOGGER, "SSE response error", BaseExceptionGroup("nursery", [closed]))
        _log(SDK_LOGGER, "Error handling POST request", closed)
        _log(HYPERCORN_LOGGER, "Error in ASGI Framework", echo)
    assert [(r.name, r.levelname, r.exc_info) for r in caplog.records] == [(SDK_LOGGER, "INFO", None)] * 2
    assert caplog.records[0].getMessage() == (
        "SSE response error: the session was terminated (DELETE) while this request was handed to it; dropped"
    )
    assert "Traceback" not in caplog.text


async def test_other_errors_keep_their_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """Any other error on the same loggers, and everything once serving ends, is logged as it was."""
    closed = await _closed_stream_error()
    with session_race_logs_quiet():
        _log(SDK_LOGGER, "Error handling POST request", ValueError("bad"))
        _log(SDK_LOGGER, "SSE response error", BaseExceptionGroup("nursery", [closed, ValueError("bad")]))
        _log(
            HYPERCORN_LOGGER,
            "Error in ASGI Framework",
            UnexpectedMessageError(ASGIHTTPState.CLOSED, "http.response.start"),
        )
    _log(SDK_LOGGER, "Error handling POST request", closed)
    assert [r.levelname for r in caplog.records] == ["ERROR"] * 4
    assert all(r.exc_info is not None for r in caplog.records)
