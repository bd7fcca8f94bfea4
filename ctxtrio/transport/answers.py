"""Recorded answers for the warm start: how they are keyed, stamped, checked, and kept honest.

Pure file and JSON work (no trio, no SDK): the warm start loads them before anything
heavy is imported.

* **Keys** are the request minus its id and the client's name. A ``tools/list`` (or any
  request after the handshake) is keyed together with the ``initialize`` request of its
  connection, because the negotiated protocol version shapes the answer.
* **The stamp** (:func:`fingerprint`) changes whenever an answer could: the versions of
  ctxtrio, the SDK, ``mcp-types``, pydantic and pydantic-core (which generate every
  schema the SDK writes), Python, the settings, and every source file of the package.
* **Loading validates**: a file whose answers are not JSON objects of the expected shape
  (``initialize``: protocol version, capabilities, serverInfo named ctxtrio;
  ``tools/list``: named tools with input schemas) is ignored as a whole.
* **Every early answer is checked** (:class:`AnswerRecorder`): the SDK still processes
  each request answered early, and its own answer is compared with what was sent. A
  mismatch is logged and drops the recording, which then holds only the SDK's answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

from .._version import __version__

if TYPE_CHECKING:
    from .messages import Peek

__all__ = [
    "CACHEABLE",
    "AnswerRecorder",
    "answers_path",
    "fingerprint",
    "id_token",
    "load_answers",
    "request_key",
]

log = logging.getLogger("ctxtrio.transport")

CACHEABLE = frozenset({"initialize", "server/discover", "tools/list"})
#: Distributions whose code shapes the answers (the SDK, its types, the schema generator).
_SHAPERS = ("mcp", "mcp-types", "pydantic", "pydantic-core")
#: Who the client says it is: the answers do not depend on it, so it is left out of keys
#: (LM Studio, Claude Desktop and the Inspector then share one recording).
_CLIENT_INFO = ("clientInfo", "io.modelcontextprotocol/clientInfo")


def fingerprint(settings: str = "") -> str:
    """Changes whenever an answer could change: versions, settings, or any source file."""
    digest = hashlib.sha256(settings.encode())
    versions = []
    for name in _SHAPERS:
        try:
            versions.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name}=?")
    digest.update(f"{__version__}|{'|'.join(versions)}|{sys.version}".encode())
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        try:
            stat = path.stat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(package)}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:32]


def id_token(value: object) -> str:
    """A JSON-RPC id as a comparable string (ids may be numbers or strings)."""
    return json.dumps(value)


def request_key(message: object, session: str = "") -> tuple[str, object] | None:
    """``(key, id)`` for a cacheable request, else None.

    ``session`` is the key of the connection's ``initialize`` request; it is part of the
    key of every other request.
    """
    if not isinstance(message, dict) or message.get("method") not in CACHEABLE or "id" not in message:
        return None
    params = _without_client_info(message.get("params"))
    key = f"{message['method']} {json.dumps(params, sort_keys=True, separators=(',', ':'))}"
    if message["method"] != "initialize" and session:
        key = f"{session} => {key}"
    return key, message["id"]


def _without_client_info(params: object) -> object:
    if not isinstance(params, dict):
        return params
    trimmed = {key: value for key, value in params.items() if key not in _CLIENT_INFO}
    meta = trimmed.get("_meta")
    if isinstance(meta, dict):
        trimmed["_meta"] = {key: value for key, value in meta.items() if key not in _CLIENT_INFO}
    return trimmed


def _method(key: str) -> str:
    return key.rsplit(" => ", 1)[-1].split(" ", 1)[0]


def valid_answer(key: str, answer: object) -> bool:
    """Whether ``answer`` (parsed) has the shape of the SDK's result for ``key``'s method."""
    if not isinstance(answer, dict):
        return False
    method = _method(key)
    if method == "initialize":
        info = answer.get("serverInfo")
        return (
            isinstance(answer.get("protocolVersion"), str)
            and isinstance(answer.get("capabilities"), dict)
            and isinstance(info, dict)
            and info.get("name") == "ctxtrio"
        )
    if method == "tools/list":
        tools = answer.get("tools")
        return isinstance(tools, list) and all(
            isinstance(tool, dict) and isinstance(tool.get("name"), str) and isinstance(tool.get("inputSchema"), dict)
            for tool in tools
        )
    return method in CACHEABLE


def load_answers(path: Path, stamp: str) -> dict[str, str]:
    """Recorded answers for this build, or {} when missing, stale, unreadable or malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("fingerprint") != stamp or not isinstance(data.get("answers"), dict):
        return {}
    answers: dict[str, str] = {}
    for key, value in data["answers"].items():
        try:
            parsed = json.loads(value) if isinstance(value, str) else None
        except (ValueError, RecursionError):
            parsed = None
        if not valid_answer(str(key), parsed):
            log.warning("ignoring %s: the recorded answer to %.60s is malformed", path, key)
            return {}
        answers[str(key)] = json.dumps(parsed, separators=(",", ":"), ensure_ascii=False)
    return answers


def answers_path() -> Path:
    """Where recorded answers live: the user's cache dir (``$XDG_CACHE_HOME/ctxtrio``).

    Not the data dir: the answers belong to the build, not to the stored memory, so
    every data dir and every host on this account starts fast once one has run.
    """
    return Path(platformdirs.user_cache_dir("ctxtrio", appauthor=False)) / "warm-start.json"


class AnswerRecorder:
    """Watches the SDK's lines: checks and drops duplicates of early answers, records new ones.

    ``answered`` maps each id answered early to the answer text that was sent;
    ``pending`` maps cacheable request ids to their keys; ``session`` is the key of the
    connection's ``initialize`` as the early responder saw it.
    """

    def __init__(
        self,
        path: Path,
        stamp: str,
        answers: dict[str, str],
        *,
        answered: dict[str, str] | None = None,
        pending: dict[str, str] | None = None,
        session: str = "",
    ) -> None:
        self._path = path
        self._stamp = stamp
        self._answered = dict(answered or {})
        self._pending = dict(pending or {})
        self._answers = dict(answers)
        self._session = session
        self._dirty = False
        #: Early answers the SDK contradicted (a stale or foreign recording).
        self.mismatches = 0

    def wants(self, token: str) -> bool:
        """Whether the response with this id must be checked or recorded."""
        return token in self._answered or token in self._pending

    def note_request(self, seen: Peek) -> None:
        """Remember a cacheable request read by the SDK's line source."""
        found = request_key(seen.message, self._session)
        if found is None:
            return
        key, request_id = found
        if _method(key) == "initialize":
            self._session = key
        self._pending[id_token(request_id)] = key

    def filter(self, seen: Peek) -> bool:
        """False for a response that was already sent early; records cacheable answers."""
        message = seen.message
        if not isinstance(message, dict) or seen.id is None:
            return True
        token = seen.id
        key = self._pending.pop(token, None)
        result = message.get("result")
        if token in self._answered:
            sent = self._answered.pop(token)
            if json.loads(sent) != result:
                self._drop(key, token)
            return False
        if key is not None and isinstance(result, dict) and valid_answer(key, result):
            answer = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
            if self._answers.get(key) != answer:
                self._answers[key] = answer
                self._dirty = True
        return True

    def _drop(self, key: str | None, token: str) -> None:
        self.mismatches += 1
        log.warning(
            "warm start: the early answer to request %s (%.80s) differs from the SDK's; dropping the recording",
            token,
            key or "?",
        )
        self._answers = {}
        self._dirty = True

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
