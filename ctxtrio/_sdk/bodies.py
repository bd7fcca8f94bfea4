"""Large HTTP request bodies parsed in a worker thread, not by the SDK on the event loop.

The SDK's handler of a Streamable HTTP POST (``mcp.server._streamable_http_modern``) parses
the whole body with ``json.loads`` on the event loop: for a 1 MB ``doc_ingest`` that is
one step of ~2 ms of CPU on a quiet machine and 5-7 ms beside a storm of ingests, which
every other call's next step (a ``context_status``) waits behind. The transport's gate
(:class:`~ctxtrio.transport.http.Gate`) parses a large body in a worker thread first
(:func:`parse_in_thread`) and hands the result to the SDK through :func:`given`: while
that block runs, the SDK module's ``json.loads`` (replaced by :func:`install` with
:data:`_JSON`) returns the object parsed for exactly those bytes, once, and otherwise is
``json.loads``. A body that does not parse is not handed over, so the SDK parses it
again and answers its own parse error.

The hand-over is a :class:`contextvars.ContextVar`: the SDK handles a POST in the task
the gate runs in, and another request's task (which did not start inside the block) never
sees it. The variable holds a one-shot box, not the pair itself: every context copied inside
the block (each task the SDK starts there, each message its context streams send on) shares
the box, which the hand-over empties and the block's end empties in any case. Those copies
outlive the request (an HTTP session's message router keeps the context of the last message
it passed on), and a copy of the pair kept the body and its parse alive with them: after a
19M-character doc_ingest an idle session held them until it closed (RSS 259 -> 185 MB when
it was deleted). Every hand-over is checked against the bytes given.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from contextvars import ContextVar
from types import SimpleNamespace
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["given", "install", "parse_in_thread"]

#: The body the gate parsed for the current request and what it parsed to, in a box of one, emptied once
#: handed over or once the block ends (the copies of a context share the box, not the pair).
_GIVEN: ContextVar[list[tuple[bytes, object]] | None] = ContextVar("ctxtrio_parsed_body", default=None)
_NOT_PARSED = object()


def _handed_or(parse: Callable[..., object], data: str | bytes | bytearray, options: dict[str, object]) -> object:
    """The object the gate parsed for ``data``, once (the SDK parses a body once, and the object is its
    now); else ``parse(data, **options)``."""
    box = _GIVEN.get()
    if not options and box and box[0][0] == data:
        return box.pop()[1]
    return parse(data, **options)


def _loads(data: str | bytes | bytearray, **options: object) -> object:
    """``json.loads``, except that the body the gate parsed is not parsed again."""
    return _handed_or(json.loads, data, options)


def _from_json(data: str | bytes | bytearray, **options: object) -> object:
    """``pydantic_core.from_json``, except that the body the gate parsed is not parsed again."""
    import pydantic_core

    return _handed_or(pydantic_core.from_json, data, options)


#: Stands in for the ``json`` module in the SDK's module: its ``loads`` is :func:`_loads`.
_JSON = SimpleNamespace(**{name: getattr(json, name) for name in json.__all__})
_JSON.loads = _loads


def install() -> None:
    """Point the SDK's two Streamable HTTP POST handlers at :func:`_loads` and :func:`_from_json` (idempotent).

    The modern one (a protocol version after the 2025 handshakes) parses with its module's
    ``json.loads``; the stateful one (a 2025 session: ``initialize``, then ``Mcp-Session-Id``)
    with its module's ``pydantic_core.from_json``.
    """
    from mcp.server import _streamable_http_modern as modern
    from mcp.server import streamable_http as stateful

    modern.json = _JSON  # type: ignore[attr-defined,assignment]  # its unexported global ``json``
    # That module uses nothing else of pydantic_core (tests/test_sdk.py holds it to that).
    stateful.pydantic_core = SimpleNamespace(from_json=_from_json)  # type: ignore[attr-defined,assignment]


async def parse_in_thread(pieces: list[bytes], limiter: trio.CapacityLimiter) -> tuple[bytes, object]:
    """The body of ``pieces`` joined, and ``json.loads`` of it, in a worker thread (at most ``limiter`` at once).

    A body that is not valid JSON parses to a marker :func:`given` does not hand over.
    ``pieces`` is emptied once joined: the parts are not kept beside the whole.
    """

    def parse() -> tuple[bytes, object]:
        body = b"".join(pieces)
        pieces.clear()
        try:
            return body, json.loads(body)
        except (ValueError, RecursionError):  # the SDK parses it again and answers the error
            return body, _NOT_PARSED

    return await trio.to_thread.run_sync(parse, limiter=limiter)


@contextmanager
def given(body: bytes, parsed: object) -> Iterator[bytes]:
    """While the block runs, the SDK's ``json.loads`` of the bytes this yields, in this task, returns ``parsed``.

    The SDK is to be handed the yielded bytes as the request's body: a short stand-in when
    ``body`` parsed (so the SDK's request object, which an HTTP session keeps until its next
    message, caches a few bytes, not the body), else ``body`` itself for the SDK to refuse.
    At the end of a request's block (the SDK has answered it) the containers of ``parsed``
    are emptied: the SDK keeps the last message it validated from them, whose values (a
    doc_ingest's text) are the same objects. Not a notification's, which the SDK answers
    (202) before it handles it.
    """
    if parsed is _NOT_PARSED:
        yield body
        return
    del body  # the caller passes parse_in_thread's pair unnamed: this was the last reference
    stand_in = _STAND_IN
    box = [(stand_in, parsed)]
    token = _GIVEN.set(box)
    try:
        yield stand_in
    finally:
        box.clear()  # for the context copies made inside the block, which may outlive it
        _GIVEN.reset(token)
        if isinstance(parsed, dict) and "id" in parsed:
            _empty(parsed)


#: What the SDK reads as the body of a request the gate parsed: only :func:`_loads` under
#: :func:`given` parses it (to the gate's object); anywhere else it is an invalid request.
_STAND_IN = b'{"ctxtrio": "request body parsed by the gate"}'


def _empty(value: object, depth: int = 0) -> None:
    """Empty the dicts and lists inside ``value`` (a parsed JSON request) depth first, a few levels down."""
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    if depth < 4:
        for child in list(children):
            _empty(child, depth + 1)
    if isinstance(value, dict | list):
        value.clear()
