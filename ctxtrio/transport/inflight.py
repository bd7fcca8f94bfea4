"""Which requests are in flight on a line-based transport, so shutdown can wait for them.

The SDK cancels what it is serving when its read stream ends. "Stop accepting, give
in-flight calls a bounded grace period" therefore happens here: the line source asks
:class:`InFlight` to wait until every request it passed on has been answered (or the
grace period ends) before it reports EOF to the SDK.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import trio

__all__ = ["InFlight", "Peek", "peek"]

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


class InFlight:
    """Request ids read but not yet answered."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._idle = trio.Event()
        self._idle.set()

    def __len__(self) -> int:
        return len(self._ids)

    def started(self, token: str) -> None:
        self._ids.add(token)
        if self._idle.is_set():
            self._idle = trio.Event()

    def finished(self, token: str) -> None:
        self._ids.discard(token)
        if not self._ids:
            self._idle.set()

    async def wait_idle(self) -> None:
        """Return once nothing is in flight."""
        while self._ids:
            await self._idle.wait()
