"""One ingest of a given source file at a time, across tasks and processes sharing a data dir.

Ingesting a file without a ``doc_id`` first looks for the document already read from that
path (to replace it, or skip it when unchanged), then writes. Two ``ctxtrio ingest`` runs
of one folder at once both found nothing and both stored the file: 3 concurrent runs of
a 20-file folder left 31 documents (issue 27, finding 10). :func:`hold_source` holds a
lock per source from that look-up to the commit, so the second run sees the first one's
document. Files of different sources still ingest in parallel.

The lock is a POSIX record lock (``fcntl.lockf``) on one byte of ``docs/ingest.lock``, at
an offset hashed from the source path: one small file however many sources there are (a
collision only makes two sources wait for each other). Record locks belong to the
process, not the descriptor, so tasks of one process also take a per-offset
``trio.Lock`` first; and the process opens the file once and closes it only when no task
holds a lock on it, because closing any descriptor of it drops every lock the process
holds on it (fcntl(2)). The lock is
taken without blocking and polled, so waiting for it can be cancelled; a process that
dies releases its locks.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

__all__ = ["LOCK_NAME", "hold_source"]

LOCK_NAME = "ingest.lock"
_MAX_PAUSE_S = 0.1


@dataclass
class _LockFile:
    """One lock file as this process has it open, and its tasks' per-offset locks."""

    fd: int
    local: dict[int, trio.Lock] = field(default_factory=dict)
    held: int = 0  # tasks inside hold_source on this file


#: By the lock file's path: one descriptor per file in the process, closed when no task holds a lock.
_FILES: dict[str, _LockFile] = {}


@asynccontextmanager
async def hold_source(folder: Path, source: str) -> AsyncIterator[None]:
    """Hold the lock of ``source`` (a resolved path) in ``folder/ingest.lock`` for the ``async with`` body."""
    path = str(folder / LOCK_NAME)  # the data dir is resolved when it is opened
    offset = _offset(source)
    file = _FILES.get(path)
    if file is None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        file = _FILES[path] = _LockFile(fd)
    local = file.local.setdefault(offset, trio.Lock())
    file.held += 1
    try:
        async with local:
            await _lock(file.fd, offset)
            try:
                yield
            finally:
                fcntl.lockf(file.fd, fcntl.LOCK_UN, 1, offset)
    finally:
        file.held -= 1
        if not local.locked() and local.statistics().tasks_waiting == 0:
            file.local.pop(offset, None)
        if file.held == 0:
            del _FILES[path]
            with contextlib.suppress(OSError):
                os.close(file.fd)


def _offset(source: str) -> int:
    digest = hashlib.blake2b(source.encode("utf-8", "surrogateescape"), digest_size=5).digest()
    return int.from_bytes(digest, "big")


async def _lock(fd: int, offset: int) -> None:
    pause = 0.002
    while True:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        await trio.sleep(pause)
        pause = min(pause * 2, _MAX_PAUSE_S)
