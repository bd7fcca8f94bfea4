"""Warm start: answer a host's first requests from the SDK's own earlier answers.

Importing the MCP SDK takes 1.2-2 s on a small machine (pydantic builds hundreds of
protocol models), so a host that spawns ctxtrio would wait that long for ``tools/list``.
The answers to the first requests a host sends (``initialize`` or ``server/discover``,
then ``tools/list``) depend only on the request and on this build of ctxtrio, so:

* while the SDK serves, :class:`~ctxtrio.transport.answers.AnswerRecorder` stores its
  answers to those requests in the user's cache dir (``warm-start.json``), keyed and
  stamped as :mod:`ctxtrio.transport.answers` describes, and validated when loaded;
* at the next start, :class:`EarlyResponder` runs in a thread before the SDK is even
  imported, and answers those requests from the file, with the new id;
* when the server is ready, :meth:`EarlyResponder.handoff` stops the thread and gives
  every line it consumed to the SDK, which processes them as usual (so its session state
  is exactly as if it had seen them first); the SDK's duplicate answers to requests
  already answered are compared with what was sent, then dropped. A mismatch is logged
  and drops the recording, so a wrong answer is given at most once.

``--no-warm-start`` (``CTX_WARM_START=false``) turns all of it off: nothing is answered
early and nothing is recorded.

The protocol itself stays the SDK's: nothing is answered here that the SDK did not answer
identically before, and anything not in the file waits for the SDK.
"""

from __future__ import annotations

import json
import logging
import os
import select
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .answers import (
    AnswerRecorder,
    answers_path,
    fingerprint,
    id_token,
    load_answers,
    request_key,
)

__all__ = [
    "AnswerRecorder",
    "EarlyResponder",
    "Handoff",
    "WarmStart",
    "answers_path",
    "begin_warm_start",
    "fingerprint",
    "load_answers",
    "request_key",
]

log = logging.getLogger("ctxtrio.transport")

_POLL_MS = 20


@dataclass
class Handoff:
    """What the early responder leaves for the SDK."""

    #: Complete lines already read from stdin, in order, to be fed to the SDK first.
    lines: list[bytes] = field(default_factory=list)
    #: Bytes read after the last complete line.
    rest: bytes = b""
    #: Ids already answered; the SDK's answers to them are checked, then dropped.
    answered: set[str] = field(default_factory=set)
    #: What was sent for each id answered early (the result, as JSON text).
    sent: dict[str, str] = field(default_factory=dict)
    #: Cacheable requests seen: id → key, so their SDK answers can be recorded.
    pending: dict[str, str] = field(default_factory=dict)
    #: The key of the connection's initialize request, once seen.
    session: str = ""

    def recorder(self, path: Path, stamp: str, answers: dict[str, str]) -> AnswerRecorder:
        """The recorder that checks the SDK's answers against this handoff."""
        answered = {token: self.sent.get(token, "null") for token in self.answered}
        return AnswerRecorder(path, stamp, answers, answered=answered, pending=self.pending, session=self.session)


class EarlyResponder:
    """A thread that answers recorded requests on ``out_fd`` until :meth:`handoff`."""

    def __init__(self, in_fd: int, out_fd: int, answers: dict[str, str]) -> None:
        self._in_fd = in_fd
        self._out_fd = out_fd
        self._answers = answers
        self._stop = threading.Event()
        self._state = Handoff()
        self._buffer = bytearray()
        self._thread = threading.Thread(target=self._run, name="ctxtrio-warm-start", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def handoff(self) -> Handoff:
        """Stop answering; return what was read. Blocks for at most one poll interval."""
        self._stop.set()
        self._thread.join()
        self._state.rest = bytes(self._buffer)
        return self._state

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._in_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        answering = True
        while not self._stop.is_set():
            if not poller.poll(_POLL_MS):
                continue
            try:
                chunk = os.read(self._in_fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return  # EOF: the SDK sees it too, after the consumed lines
            self._buffer += chunk
            while (newline := self._buffer.find(b"\n")) >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                self._state.lines.append(line)
                if answering:
                    answering = self._answer(line)
            if not answering:
                return  # leave the rest of stdin for the SDK

    def _answer(self, line: bytes) -> bool:
        """Answer ``line`` if recorded; False once a request needs the SDK."""
        try:
            message = json.loads(line)
        except ValueError:
            return False
        found = request_key(message, self._state.session)
        if found is None:
            # Notifications (no id) need no answer; anything else waits for the SDK.
            return isinstance(message, dict) and "id" not in message and "method" in message
        key, request_id = found
        if isinstance(message, dict) and message.get("method") == "initialize":
            self._state.session = key
        token = id_token(request_id)
        self._state.pending[token] = key
        answer = self._answers.get(key)
        if answer is None:
            return False
        reply = f'{{"jsonrpc":"2.0","id":{token},"result":{answer}}}\n'.encode()
        try:
            view = memoryview(reply)
            while view:
                view = view[os.write(self._out_fd, view) :]
        except OSError:
            return False
        self._state.answered.add(token)
        self._state.sent[token] = answer
        return True


@dataclass
class WarmStart:
    """The recorded answers of this build, and the early responder when one runs."""

    path: Path
    stamp: str
    answers: dict[str, str]
    responder: EarlyResponder | None = None

    def handoff(self) -> Handoff:
        """Stop the responder (if any) and return what the SDK must process first."""
        return self.responder.handoff() if self.responder is not None else Handoff()


def begin_warm_start(settings: str, *, in_fd: int = 0, out_fd: int = 1, answer: bool = True) -> WarmStart:
    """Load recorded answers and, if there are any and ``answer``, start answering now.

    ``settings`` describes whatever configuration could change an answer; it is part of
    the fingerprint. (Today no answer depends on configuration; it is there so that
    one that starts to cannot be served stale.)
    """
    path = answers_path()
    stamp = fingerprint(settings)
    answers = load_answers(path, stamp)
    warm = WarmStart(path, stamp, answers)
    if answer and answers:
        warm.responder = EarlyResponder(in_fd, out_fd, answers)
        warm.responder.start()
    return warm
