"""The lines of stdin that may be JSON-RPC messages; the others are answered here.

JSON-RPC 2.0, section 5.1: "Invalid JSON was received by the server" is -32700, and
"The JSON sent is not a valid Request object" is -32600, each with ``id`` null because
none could be read. The SDK would drop such lines silently. :class:`JsonLines` sits
between the stdin reader (:mod:`.stdio`) and the SDK.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Protocol

from .messages import PEEK_PARSE_LIMIT, Peek, peek, peek_parsed

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["JsonLines", "not_json", "not_message", "unread_reason"]

log = logging.getLogger("ctxtrio.transport")

#: Lines up to this long are parsed to tell JSON from not; longer ones only by their first character.
_CHECK_CHARS = 1 << 16


class _Writer(Protocol):
    """Where answers go (:class:`~.stdio.ProtocolWriter`)."""

    async def write(self, text: str) -> None: ...


class _Traffic(Protocol):
    """Who notes each line read (:class:`~.stdio.Traffic`)."""

    def incoming(self, line: str, seen: Peek | None = None) -> None: ...


def not_json(line: str) -> str | None:
    """Why ``line`` is not JSON text (for the -32700 answer), or None when it is (or is blank).

    Short lines are parsed; a longer one (a large ``doc_ingest``) is not parsed twice:
    if it starts like an object or array it is the SDK's to parse.
    """
    stripped = line.strip()
    if not stripped:
        return None
    if len(stripped) > _CHECK_CHARS:
        return None if stripped[0] in "{[" else "it does not start with { or ["
    try:
        json.loads(stripped)
    except RecursionError:
        return None  # nested too deep for this check; the SDK answers it
    except ValueError as exc:
        return str(exc)
    return None


def not_message(line: str) -> str | None:
    """Why a JSON ``line`` is no JSON-RPC message (for the -32600 answer), or None when it may be one.

    ``null``, a number, a string, an object with neither ``method`` nor ``result``/``error``,
    and an array: a batch, which MCP 2025-06-18 removed. Long lines are the SDK's (see
    :func:`not_json`).
    """
    stripped = line.strip()
    if not stripped or len(stripped) > _CHECK_CHARS:
        return None
    try:
        message = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return _not_message(message)


def _not_message(message: object) -> str | None:
    if isinstance(message, list):
        return "a batch (an array): MCP does not take batches since 2025-06-18; send one message a line"
    if not isinstance(message, dict):
        return f"{type(message).__name__ if message is not None else 'null'} is not a request or notification"
    if "method" not in message and "result" not in message and "error" not in message:
        return "an object with no method (nor result or error)"
    return None


class JsonLines:
    """The lines of ``lines`` that may be messages; the others are answered and logged.

    JSON-RPC 2.0, section 5.1: "Invalid JSON was received by the server" is -32700, and
    "The JSON sent is not a valid Request object" is -32600, each with ``id`` null
    because none could be read. The SDK would drop such lines silently.

    Every line read is noted to ``traffic`` (requests in flight, warm-start recording)
    before anything else can run. A line of up to 64 KiB is parsed here once for both
    checks and that note (it was parsed three times: 0.15 CPU-s for the stdlib's 1,758
    ``doc_ingest`` lines at load 9); the SDK parses it once more.
    """

    def __init__(self, lines: AsyncIterator[str], writer: _Writer, traffic: _Traffic | None = None) -> None:
        self._lines = lines
        self._writer = writer
        self._traffic = traffic
        self._count = 0

    def __aiter__(self) -> JsonLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._lines.__anext__()
            self._count += 1
            message = _parsed_once(line)
            if message is _UNPARSED:
                self._note(line, None)
                problem = not_json(line)
                wrong = None if problem is not None else not_message(line)
            else:  # one parse gives both checks and the traffic's look
                self._note(line, peek_parsed(message))
                problem, wrong = None, _not_message(message)
            if problem is not None:
                log.warning("stdin line %d is not JSON (%s): answered -32700 Parse error", self._count, problem)
                error = {"code": -32700, "message": f"Parse error: {problem}"}
            elif wrong is not None:
                log.warning("stdin line %d is not a JSON-RPC message (%s): answered -32600", self._count, wrong)
                error = {"code": -32600, "message": f"Invalid Request: {wrong}"}
            else:
                return line
            answer = {"jsonrpc": "2.0", "id": None, "error": error}
            await self._writer.write(json.dumps(answer, separators=(",", ":")) + "\n")

    async def unread(self, line: str, exc: ValueError) -> None:
        """Answer a line that passed the checks above but that the SDK's reader refuses (``serve_lines``'s
        ``unread``): JSON the stdlib reads and pydantic does not (an unpaired surrogate escape, ``"\\ud800"``),
        or an object of no JSON-RPC 2.0 message (``"jsonrpc": "1.0"``, a method that is no string, params
        that are no object). The SDK dropped them, logging at debug level only, so a request's client waited
        for ever and stayed in flight until the shutdown's grace ran out. A request is answered with its id
        (-32700 for text pydantic cannot read, -32600 else); a response, which answers nothing, is dropped."""
        seen = peek(line)
        why = unread_reason(exc)
        kind = "not JSON the SDK reads" if _is_parse(exc) else "not a JSON-RPC 2.0 message the SDK reads"
        if seen.kind == "response":
            log.warning("stdin line %d: the SDK cannot read this response (%s): dropped", self._count, why)
            return
        code = -32700 if _is_parse(exc) else -32600
        log.warning("stdin line %d: the SDK cannot read it (%s): answered %d", self._count, why, code)
        error = {"code": code, "message": f"{'Parse error' if code == -32700 else 'Invalid Request'}: {kind}: {why}"}
        token = json.loads(seen.id) if seen.kind == "request" and seen.id is not None else None
        await self._writer.write(
            json.dumps({"jsonrpc": "2.0", "id": token, "error": error}, separators=(",", ":")) + "\n"
        )

    def _note(self, line: str, seen: Peek | None) -> None:
        if self._traffic is not None:
            self._traffic.incoming(line, seen)


def _is_parse(exc: ValueError) -> bool:
    """Whether the SDK's reader refused the text itself (pydantic's ``json_invalid``), not its shape."""
    errors = getattr(exc, "errors", None)
    found = errors() if callable(errors) else []
    return bool(found) and found[0].get("type") == "json_invalid"


def unread_reason(exc: ValueError) -> str:
    """What the SDK's reader said of a line, in one short clause: the JSON error, or the first thing of the
    request's shape it names (pydantic lists one error for each kind of message the line is not)."""
    errors = getattr(exc, "errors", None)
    found = errors() if callable(errors) else []
    if not found:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    first = found[0]
    if first.get("type") == "json_invalid":
        message = str(first.get("ctx", {}).get("error", first.get("msg", "")))
        return (
            f"{message} (an unpaired UTF-16 surrogate escape is no character)" if "hex escape" in message else message
        )
    where = [str(part) for part in first.get("loc", ())]
    for error in found:  # the request's own error when the line has a method, else the first
        if error.get("loc", ("",))[0] == "JSONRPCRequest":
            first, where = error, [str(part) for part in error.get("loc", ())]
            break
    return f"{'.'.join(where[1:]) or 'message'}: {first.get('msg', '')}"


_UNPARSED = object()
#: What JSON counts as whitespace (RFC 8259, section 2); ``str.strip()`` takes more.
_JSON_SPACE = " \t\n\r"


def _parsed_once(line: str) -> object:
    """A short line's JSON value, or _UNPARSED: not JSON, too long, or edged by what only ``str.strip`` drops.

    Where this gives a value, :func:`not_json` (which parses ``line.strip()``) finds no
    problem and :func:`peek` (which parses ``line``) parses the same text, so their
    verdicts follow from this one parse; elsewhere they run as they are.
    """
    if len(line) > min(_CHECK_CHARS, PEEK_PARSE_LIMIT):  # what peek and not_json would not parse either
        return _UNPARSED
    stripped = line.strip(_JSON_SPACE)
    if not stripped or stripped.strip() != stripped:
        return _UNPARSED
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return _UNPARSED
