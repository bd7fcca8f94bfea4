"""A cheap look at protocol lines: request, notification or response, and the id.

Pure (no trio), so the warm start can use it before anything heavy is imported. It
never raises: a line that is not JSON-RPC (``"[" * 30000``, a bad escape, binary
junk) is ``"other"``, and the SDK answers it with a parse error as it should.

Large lines (a document being ingested) are not parsed twice. Their top-level ``id``
and ``method`` are found where clients put them: in the head (``{"jsonrpc":"2.0",
"id":7,"method":...}``) or in the tail (``{"method":...,"params":{...},"id":7}``, as
the TypeScript SDK writes them). A key counts only when no other object or array is
open around it, which is checked on the few hundred bytes between it and the line's
edge (with strings taken out: inside a JSON string every ``"`` is escaped, so an
unescaped ``"id":`` is always a key). Only a line whose keys are found in neither end
is parsed whole (so is one with a key at neither edge).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["PEEK_PARSE_LIMIT", "Peek", "canonical_id", "cancelled_id", "peek", "peek_parsed"]

PEEK_PARSE_LIMIT = 1 << 16
_EDGE = 512
_KEY = r'"{name}"\s*:\s*'
_STRING_VALUE = r'("(?:[^"\\]|\\.)*")'
_ID_VALUE = r'(-?\d+|"(?:[^"\\]|\\.)*"|null)'
_STRING = re.compile(_STRING_VALUE)


@dataclass(frozen=True, slots=True)
class Peek:
    """What a protocol line is: request, notification or response, and its id as JSON text."""

    kind: str  # "request" | "notification" | "response" | "other"
    id: str | None
    message: object = None  # the parsed message when the line was small enough to parse


def canonical_id(token: str) -> str:
    """One spelling per id: the SDK treats ``"7"`` and ``7`` as the same request."""
    if token.startswith('"'):
        try:
            return str(int(json.loads(token)))
        except ValueError:
            return token
    return token


def cancelled_id(message: object) -> str | None:
    """The request id (as JSON text) a ``notifications/cancelled`` message cancels, else None."""
    if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
        return None
    params = message.get("params")
    value = params.get("requestId") if isinstance(params, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    return json.dumps(value)


def peek(line: str) -> Peek:
    """Classify ``line``; never raises."""
    if len(line) <= PEEK_PARSE_LIMIT:
        return _parsed(line)
    stripped = line.strip()
    if not stripped.startswith("{") or not stripped.endswith("}"):
        return Peek("other", None)
    method = _top_level(stripped, "method", _STRING_VALUE)
    token = _top_level(stripped, "id", _ID_VALUE)
    if method is None or token is None:
        return _parsed(line)  # a key not at either edge: parse the line whole (rare)
    if token == "null":
        return Peek("notification", None)
    try:
        return Peek("request", json.dumps(json.loads(token)))
    except ValueError:  # a bad escape in the id: the SDK answers it with an error
        return Peek("other", None)


def _parsed(line: str) -> Peek:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return Peek("other", None)
    return peek_parsed(message)


def peek_parsed(message: object) -> Peek:
    """Classify a line already parsed to ``message`` (what :func:`peek` gives for a line that short)."""
    if not isinstance(message, dict):
        return Peek("other", None)
    value = message.get("id")
    token = json.dumps(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    if "method" in message:
        return Peek("request" if token is not None else "notification", token, message)
    return Peek("response" if token is not None else "other", token, message)


def _top_level(line: str, name: str, value: str) -> str | None:
    """The value text of top-level key ``name`` when it sits near either end of ``line``."""
    pattern = re.compile(_KEY.format(name=name) + value)
    head = line[:_EDGE]
    for match in pattern.finditer(head):
        if _depth(head[: match.start()]) == 1:
            return match.group(1)
    tail = line[-_EDGE:]
    for match in pattern.finditer(tail):
        if _depth(tail[match.end() :], closing=True) == 1:
            return match.group(1)
    return None


def _depth(text: str, *, closing: bool = False) -> int:
    """How many objects/arrays ``text`` opens (or, with ``closing``, closes); -1 if it does both."""
    bare = _STRING.sub("", text)
    opens = bare.count("{") + bare.count("[")
    closes = bare.count("}") + bare.count("]")
    if closing:
        return closes if opens == 0 else -1
    return opens if closes == 0 else -1
