"""A cheap look at protocol lines: request, notification or response, and the id.

Pure (no trio), so the warm start can use it before anything heavy is imported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["Peek", "peek"]

# Large messages (a document being ingested) are not parsed twice: the id and method of
# an SDK-written message sit near its start, so a regex over the head finds them.
_FULL_PARSE_LIMIT = 1 << 16
_HEAD = 512
_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


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

