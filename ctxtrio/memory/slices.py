"""Finished LLM summary steps of a session's compactions, kept beside its journal.

``sessions/<id>.slices`` holds one JSON line per step the LLM finished (``{"key",
"text"}``; the key is :func:`~ctxtrio.llm._plan.cache_key` of the step, so it names
the step's purpose, target and text). It is the session's
:class:`~ctxtrio.llm.summarizer.SummaryCache`: the background worker puts each slice
summary here the moment it is checked, so a compaction whose LLM summary was not
ready by its call's deadline resumes from here on the next call, or after a restart,
instead of starting over (issue 10).

Like the other files beside a journal it is derived: losing it loses only LLM work.
Each step is one ``write`` of one line with ``O_APPEND``, then fsynced, so a crash can
tear at most the last line and processes sharing the data dir never interleave
inside a line; a torn, foreign or malformed line is skipped on load. The file is
removed once every summary that needed it is in the journal (:meth:`SliceFile.clear`),
and started afresh past :data:`MAX_BYTES`, so it stays small.

``load``, ``put`` and ``clear`` run their file I/O in a worker thread.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Final

import trio

__all__ = ["MAX_BYTES", "SliceFile", "slices_path"]

MAX_BYTES: Final = 4 << 20
_SUFFIX: Final = ".slices"


def slices_path(journal: Path) -> Path:
    """``sessions/<id>.slices`` beside ``sessions/<id>.jsonl``."""
    return journal.with_name(journal.name.removesuffix(".jsonl") + _SUFFIX)


class SliceFile:
    """The slice cache of the session whose journal is ``journal``."""

    def __init__(self, journal: Path) -> None:
        self.path = slices_path(journal)
        self._entries: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        """The finished step ``key`` as of the last :meth:`load` or :meth:`put`, or None."""
        return self._entries.get(key)

    def __len__(self) -> int:
        return len(self._entries)

    async def load(self) -> None:
        """Read what this and other processes have kept so far."""
        self._entries = await trio.to_thread.run_sync(_read, self.path)

    async def put(self, key: str, text: str) -> None:
        """Keep ``text`` for ``key`` durably (fsynced) before returning; a failed write only loses the cache."""
        line = (json.dumps({"key": key, "text": text}, ensure_ascii=False) + "\n").encode()
        await trio.to_thread.run_sync(partial(_append, self.path, line))
        self._entries[key] = text

    async def clear(self) -> None:
        """Forget every kept step: the summaries that needed them are in the journal."""
        self._entries = {}
        await trio.to_thread.run_sync(_remove, self.path)


def _read(path: Path) -> dict[str, str]:
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    entries: dict[str, str] = {}
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue  # torn by a crash, or damaged: only a cache
        if isinstance(record, dict) and isinstance(record.get("key"), str) and isinstance(record.get("text"), str):
            entries[record["key"]] = record["text"]
    return entries


def _append(path: Path, line: bytes) -> None:
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags, 0o600)
        try:
            if os.fstat(fd).st_size > MAX_BYTES:
                os.ftruncate(fd, 0)  # grown past any compaction's need: start afresh
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass  # derived: the step is still kept in memory for this process


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
