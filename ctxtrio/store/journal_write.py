"""One journal's write in an append, on its locked descriptor: catch up, then write the records after it.

:class:`~.journal.JournalAppender` takes the lock, passes the :class:`Tail` it kept for the
journal, and after the group's fsync keeps the :class:`Written`'s new tail; locking, the
fsync and unlocking stay with it. The file operations used here are :mod:`.journal_files`.
Blocking, in the writer's thread; ``OSError`` becomes ``StoreError`` (:func:`~.reading.store_error`).
Moved from ``journal.py`` unchanged: ``_Tail``, ``_Written``, ``JournalAppender._write_locked``
(now :func:`write_records`) and ``_catch_up``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .journal_files import ends_with_newline, write_all
from .reading import parse_lines, store_error
from .records import StoredRecord, encode_record
from .results import AppendResult

if TYPE_CHECKING:
    from .records import NewRecord

__all__ = ["Tail", "Written", "write_records"]


@dataclass(slots=True)
class Tail:
    """A journal's size and last sequence number as the appender last saw them."""

    size: int
    last_seq: int


@dataclass(frozen=True, slots=True)
class Written:
    """A journal written but not yet fsynced, still locked: what its append will return."""

    path: Path
    fd: int
    #: Size before the append (the file is cut back to it if the fsync fails).
    size: int
    created: bool
    result: AppendResult
    tail: Tail


def write_records(
    fd: int, created: bool, path: Path, new: list[NewRecord], *, tail: Tail | None, quarantine_dir: Path | None
) -> Written:
    """Write ``new`` at the end of the locked journal, numbered after the last sequence number in it.

    ``tail``: what the appender last saw of the file (None: never looked). If the file's
    size differs, the lines added since are read (their records are the result's foreign
    ones) and a torn final line is terminated first. Not fsynced.
    """
    try:
        info = os.fstat(fd)
        size = info.st_size
    except OSError as exc:
        raise store_error("stat journal", path, exc) from exc
    foreign: list[StoredRecord] = []
    prefix = b""
    if tail is None or tail.size != size:
        # Someone else wrote (or we never looked): learn the last seq, and terminate
        # a torn final line left by a crash. Our own appends always end in a newline.
        tail, foreign = _catch_up(fd, path, tail, size, quarantine_dir)
        if size > 0 and not ends_with_newline(fd, path, size):
            prefix = b"\n"
    now = time.time()
    stored: list[StoredRecord] = []
    chunks: list[bytes] = [prefix]
    offset = size + len(prefix)
    seq = tail.last_seq
    for record in new:
        seq += 1
        data, line = encode_record(record, seq=seq, ts=now)
        stored.append(StoredRecord(offset, offset + len(line), data))
        chunks.append(line)
        offset += len(line)
    write_all(fd, path, b"".join(chunks), size)
    result = AppendResult(path, stored, size + len(prefix), offset, foreign, (info.st_dev, info.st_ino))
    return Written(path, fd, size, created, result, Tail(offset, seq))


def _catch_up(
    fd: int, path: Path, tail: Tail | None, size: int, quarantine_dir: Path | None
) -> tuple[Tail, list[StoredRecord]]:
    start = tail.size if tail is not None and tail.size <= size else 0
    last_seq = tail.last_seq if tail is not None and start > 0 else 0
    try:
        data = os.pread(fd, size - start, start)
    except OSError as exc:
        raise store_error("read journal", path, exc) from exc
    result = parse_lines(data, start, path=path, quarantine_dir=quarantine_dir)
    for record in result.records:
        last_seq = max(last_seq, record.seq)
    return Tail(size, last_seq), result.records
