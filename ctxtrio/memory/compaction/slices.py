"""Finished LLM summary steps of a session's compactions, kept beside its journal.

``sessions/<id>.slices`` holds one JSON line per step the LLM finished (``{"key",
"text"}``; the key is :func:`~ctxtrio.llm._plan.cache_key` of the step, so it names
the step's purpose, target and text). It is the session's
:class:`~ctxtrio.llm.summarizer.SummaryCache`: the background worker puts each slice
summary here the moment it is checked, so a compaction whose LLM summary was not
ready by its call's deadline resumes from here on the next call, or after a restart,
instead of starting over (issue 10). Two more kinds of line mark a compaction whose
summary went into the journal before its LLM summary was ready: ``{"pending": id,
"target": tokens}`` when it is written, ``{"done": id}`` once the LLM summary has
replaced it (or it is gone); see :mod:`.finishing`.

Like the other files beside a journal it is derived: losing it loses only LLM work.
Each step is one ``write`` of one line with ``O_APPEND``, then fsynced, so a crash can
tear at most the last line and processes sharing the data dir never interleave
inside a line; a torn, foreign or malformed line is skipped on load. The file is
removed once every summary that needed it is in the journal (:meth:`SliceFile.clear`),
and started afresh past :data:`MAX_BYTES`, so it stays small. It is opened without
following a symlink and only as a regular file, and read only up to twice
:data:`MAX_BYTES` (see :mod:`.derived`).

``load``, ``put`` and ``clear`` run their file I/O in a worker thread.
"""

from __future__ import annotations

import json
import os
from functools import partial
from typing import TYPE_CHECKING, Final

import trio

from ..state.derived import open_derived, read_derived

if TYPE_CHECKING:
    from pathlib import Path

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
        #: Summary entry id -> target tokens of compactions whose LLM summary is still to come.
        self.pending: dict[str, int] = {}

    def get(self, key: str) -> str | None:
        """The finished step ``key`` as of the last :meth:`load` or :meth:`put`, or None."""
        return self._entries.get(key)

    def __len__(self) -> int:
        return len(self._entries)

    async def load(self) -> None:
        """Read what this and other processes have kept so far."""
        self._entries, self.pending = await trio.to_thread.run_sync(_read, self.path)

    async def put(self, key: str, text: str) -> None:
        """Keep ``text`` for ``key`` durably (fsynced) before returning; a failed write only loses the cache."""
        await self._write({"key": key, "text": text})
        self._entries[key] = text

    async def mark_pending(self, summary_id: str, target_tokens: int) -> None:
        """Note that summary ``summary_id`` waits for its LLM summary (of ``target_tokens``)."""
        await self._write({"pending": summary_id, "target": target_tokens})
        self.pending[summary_id] = target_tokens

    async def mark_done(self, summary_id: str) -> None:
        """Summary ``summary_id`` waits no more; with nothing else pending, the file goes."""
        self.pending.pop(summary_id, None)
        if self.pending:
            await self._write({"done": summary_id})
        else:
            await self.clear()

    async def clear(self) -> None:
        """Forget every kept step: the summaries that needed them are in the journal."""
        self._entries, self.pending = {}, {}
        await trio.to_thread.run_sync(_remove, self.path)

    async def _write(self, record: dict[str, str | int]) -> None:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
        await trio.to_thread.run_sync(partial(_append, self.path, line))


def _read(path: Path) -> tuple[dict[str, str], dict[str, int]]:
    data = read_derived(path, 2 * MAX_BYTES)
    if data is None:
        return {}, {}
    entries: dict[str, str] = {}
    pending: dict[str, int] = {}
    for raw in data.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue  # torn by a crash, or damaged: only a cache
        if not isinstance(record, dict):
            continue
        key, text, target = record.get("key"), record.get("text"), record.get("target")
        if isinstance(key, str) and isinstance(text, str):
            entries[key] = text
        elif isinstance(record.get("pending"), str) and isinstance(target, int) and not isinstance(target, bool):
            pending[record["pending"]] = target
        elif isinstance(record.get("done"), str):
            pending.pop(record["done"], None)
    return entries, pending


def _append(path: Path, line: bytes) -> None:
    try:
        fd = open_derived(path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
            if size > MAX_BYTES:
                os.ftruncate(fd, 0)  # grown past any compaction's need: start afresh
            elif size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # a torn last line stays one line on its own
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
