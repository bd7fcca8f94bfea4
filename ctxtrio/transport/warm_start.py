"""Warm start: answer a host's first requests from the SDK's own earlier answers.

Importing the MCP SDK takes 1.2-2 s on a small machine (pydantic builds hundreds of
protocol models), so a host that spawns ctxtrio would wait that long for ``tools/list``.
The answers to the first requests a host sends (``initialize`` or ``server/discover``,
then ``tools/list``) depend only on the request and on this build of ctxtrio, so:

* while the SDK serves, :class:`AnswerRecorder` stores its answers to those requests in
  the user's cache dir (``warm-start.json``), keyed by the request (minus its id and the
  client's name) and stamped with a fingerprint of the ctxtrio and SDK versions, the
  package's source files and the settings;
* at the next start, :class:`EarlyResponder` runs in a thread before the SDK is even
  imported, and answers those requests from the file, with the new id;
* when the server is ready, :meth:`EarlyResponder.handoff` stops the thread and gives
  every line it consumed to the SDK, which processes them as usual (so its session state
  is exactly as if it had seen them first); the SDK's duplicate answers to requests
  already answered are dropped by id.

The protocol itself stays the SDK's: nothing is answered here that the SDK did not answer
identically before, and anything not in the file waits for the SDK.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import os
import select
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from .._version import __version__
from .messages import Peek

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

CACHEABLE = frozenset({"initialize", "server/discover", "tools/list"})
_POLL_MS = 20


def fingerprint(settings: str = "") -> str:
    """Changes whenever an answer could change: versions, settings, or any source file."""
    digest = hashlib.sha256(settings.encode())
    try:
        mcp_version = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        mcp_version = "?"
    digest.update(f"{__version__}|{mcp_version}|{sys.version}".encode())
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        try:
            stat = path.stat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(package)}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:32]


#: Who the client says it is: the answers do not depend on it, so it is left out of keys
#: (LM Studio, Claude Desktop and the Inspector then share one recording).
_CLIENT_INFO = ("clientInfo", "io.modelcontextprotocol/clientInfo")


def request_key(message: object) -> tuple[str, object] | None:
    """``(key, id)`` for a cacheable request, else None."""
    if not isinstance(message, dict) or message.get("method") not in CACHEABLE or "id" not in message:
        return None
    params = _without_client_info(message.get("params"))
    key = f"{message['method']} {json.dumps(params, sort_keys=True, separators=(',', ':'))}"
    return key, message["id"]


def _without_client_info(params: object) -> object:
    if not isinstance(params, dict):
        return params
    trimmed = {key: value for key, value in params.items() if key not in _CLIENT_INFO}
    meta = trimmed.get("_meta")
    if isinstance(meta, dict):
        trimmed["_meta"] = {key: value for key, value in meta.items() if key not in _CLIENT_INFO}
    return trimmed


def load_answers(path: Path, stamp: str) -> dict[str, str]:
    """Recorded answers for this build, or {} when missing, stale or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("fingerprint") != stamp or not isinstance(data.get("answers"), dict):
        return {}
    return {str(key): str(value) for key, value in data["answers"].items() if isinstance(value, str)}


@dataclass
class Handoff:
    """What the early responder leaves for the SDK."""

    #: Complete lines already read from stdin, in order, to be fed to the SDK first.
    lines: list[bytes] = field(default_factory=list)
    #: Bytes read after the last complete line.
    rest: bytes = b""
    #: Ids already answered; the SDK's answers to them are dropped.
    answered: set[str] = field(default_factory=set)
    #: Cacheable requests seen: id → key, so their SDK answers can be recorded.
    pending: dict[str, str] = field(default_factory=dict)


def id_token(value: object) -> str:
    """A JSON-RPC id as a comparable string (ids may be numbers or strings)."""
    return json.dumps(value)


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
        found = request_key(message)
        if found is None:
            # Notifications (no id) need no answer; anything else waits for the SDK.
            return isinstance(message, dict) and "id" not in message and "method" in message
        key, request_id = found
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
        return True


class AnswerRecorder:
    """Watches the SDK's outgoing lines: drops duplicates of early answers, records new ones."""

    def __init__(self, path: Path, stamp: str, handoff: Handoff, answers: dict[str, str]) -> None:
        self._path = path
        self._stamp = stamp
        self._answered = set(handoff.answered)
        self._pending = dict(handoff.pending)
        self._answers = dict(answers)
        self._dirty = False

    @property
    def active(self) -> bool:
        return bool(self._answered or self._pending)

    def wants(self, token: str) -> bool:
        """Whether the response with this id must be filtered or recorded."""
        return token in self._answered or token in self._pending

    def note_request(self, seen: Peek) -> None:
        """Remember a cacheable request read by the SDK's line source."""
        found = request_key(seen.message)
        if found is not None:
            self._pending[id_token(found[1])] = found[0]

    def filter(self, seen: Peek) -> bool:
        """False for a response that was already sent early; records cacheable answers."""
        message = seen.message
        if not self.active or not isinstance(message, dict) or seen.id is None:
            return True
        token = seen.id
        if token in self._answered:
            self._answered.discard(token)
            self._pending.pop(token, None)
            return False
        key = self._pending.pop(token, None)
        if key is not None and "result" in message:
            answer = json.dumps(message["result"], separators=(",", ":"), ensure_ascii=False)
            if self._answers.get(key) != answer:
                self._answers[key] = answer
                self._dirty = True
        return True

    def save(self) -> None:
        """Write the recorded answers if they changed (blocking; atomic replace)."""
        if not self._dirty:
            return
        self._dirty = False
        temporary = self._path.with_name(f".{self._path.name}.{os.getpid()}.tmp")
        try:
            self._path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            temporary.write_text(json.dumps({"fingerprint": self._stamp, "answers": self._answers}), encoding="utf-8")
            os.replace(temporary, self._path)
        except OSError as exc:  # a cache: failing to write it only costs the next start time
            log.warning("could not save %s: %s", self._path, exc)
            with contextlib.suppress(OSError):
                temporary.unlink()


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


def answers_path() -> Path:
    """Where recorded answers live: the user's cache dir (``$XDG_CACHE_HOME/ctxtrio``).

    Not the data dir: the answers belong to the build, not to the stored memory, so
    every data dir and every host on this account starts fast once one has run.
    """
    return Path(platformdirs.user_cache_dir("ctxtrio", appauthor=False)) / "warm-start.json"


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
