"""A cheap look at protocol lines: request, notification or response, and the id.

Pure (no trio), so the warm start can use it before anything heavy is imported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["Peek", "peek", "response_id"]

# Large messages (a document being ingested) are not parsed twice: the id and method of
# an SDK-written message sit near its start, so a regex over the head finds them.
_FULL_PARSE_LIMIT = 1 << 16
_HEAD = 512
_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
# How the SDK serializes every response it writes (pydantic keeps field order).
_SDK_RESPONSE = re.compile(r'\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"(?:result|error)"')


@dataclass(frozen=True, slots=True)
class Peek:
    """What a protocol line is: request, notification or response, and its id as JSON text."""

    kind: str  # "request" | "notification" | "response" | "other"
    id: str | None
    message: object = None  # the parsed message when the line was small enough to parse


def peek(line: str) -> Peek:
    if len(line) <= _FULL_PARSE_LIMIT:
        try:
            message = json.loads(line)
        except ValueError:
            return Peek("other", None)
        if not isinstance(message, dict):
            return Peek("other", None)
        token = json.dumps(message["id"]) if "id" in message else None
        if "method" in message:
            return Peek("request" if token is not None else "notification", token, message)
        return Peek("response" if token is not None else "other", token, message)
    head = line[:_HEAD]
    match = _ID.search(head)
    token = json.dumps(json.loads(match.group(1))) if match else None
    if '"method"' in head:
        return Peek("request" if token is not None else "notification", token)
    return Peek("response" if token is not None else "other", token)


def response_id(line: str) -> str | None:
    """The id of a response as the SDK writes it, read from its first bytes; else None.

    Outgoing results can be large (a recall or a search packs kilobytes), and only the
    id is needed to track what is in flight.
    """
    match = _SDK_RESPONSE.match(line)
    return json.dumps(json.loads(match.group(1))) if match else None
