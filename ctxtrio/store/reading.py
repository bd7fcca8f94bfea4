"""Reading journals with recovery: complete lines only, malformed ones quarantined.

Blocking file I/O for worker threads (``trio.to_thread``), used by the services through
the store's handle and by the appender and the index. ``OSError`` becomes
``StoreError`` here, once. A missing file reads as empty. An incomplete final line (a
torn write, or one in progress) is skipped and counted; a malformed complete line (bad
JSON, not UTF-8, missing envelope) is copied to the quarantine folder once
(``<folder>--<file>.<offset>.bad``) and skipped; the journal itself is never rewritten.
"""

from __future__ import annotations

import errno
import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

from .._errors import StoreError
from .records import Record, StoredRecord, decode_line

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

__all__ = [
    "DiskFullError",
    "ReadResult",
    "free_bytes",
    "journal_size",
    "parse_lines",
    "read_blocks",
    "read_journal",
    "read_lines",
    "store_error",
]

log = logging.getLogger("ctxtrio.store")


@dataclass(frozen=True, slots=True)
class ReadResult:
    """What reading a journal from some offset found."""

    records: list[StoredRecord]
    #: Offset just past the last complete line: where the next read starts.
    end: int
    #: Bytes of an incomplete final line that were skipped (a torn write, or one in progress).
    torn_tail_bytes: int = 0
    #: Offsets of malformed complete lines that were skipped (and copied to quarantine).
    quarantined: list[int] = field(default_factory=list)


class DiskFullError(StoreError):
    """No room on the disk (or in the quota) for a file operation: ``ENOSPC``, ``EDQUOT``.

    The store writer acts on it: a journal append that finds no room takes the room of the
    derived index first and is tried once more (:mod:`.room`).
    """


def store_error(action: str, path: Path, exc: OSError) -> StoreError:
    message = f"cannot {action} {path}: {exc.strerror or exc}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFullError(message, hint="free_space")
    return StoreError(message)


def journal_size(path: Path) -> int:
    """The bytes of the journal at ``path``: 0 once it is gone (removed since it was listed)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise store_error("stat", path, exc) from exc


def read_journal(path: Path, start: int = 0, *, quarantine_dir: Path | None = None) -> ReadResult:
    """Read complete lines from ``start`` to the end of ``path``.

    A missing file reads as empty. Malformed lines are skipped and, when
    ``quarantine_dir`` is given, copied there once (named after the journal and offset).
    """
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read()
    except FileNotFoundError:
        return ReadResult([], start)
    except OSError as exc:
        raise store_error("read journal", path, exc) from exc
    return parse_lines(data, start, path=path, quarantine_dir=quarantine_dir)


def read_blocks(
    path: Path, start: int = 0, *, block_bytes: int, quarantine_dir: Path | None = None
) -> Iterator[ReadResult]:
    """Read complete lines from ``start`` to the end, about ``block_bytes`` at a time.

    Each result holds the complete lines of one block (a line longer than a block is
    read whole); a caller applies them and drops them, so replaying a long journal holds
    one block of it in memory. A missing file yields nothing.
    """
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return
    except OSError as exc:
        raise store_error("read journal", path, exc) from exc
    with handle:
        while True:
            try:
                handle.seek(start)
                data = handle.read(block_bytes)
                if len(data) == block_bytes and data.rfind(b"\n") < 0:
                    data += handle.readline()  # one line longer than a block
            except OSError as exc:
                raise store_error("read journal", path, exc) from exc
            read = parse_lines(data, start, path=path, quarantine_dir=quarantine_dir)
            yield read
            if read.end == start or len(data) < block_bytes:
                return
            start = read.end


def read_lines(spans: Sequence[tuple[Path, int, int]]) -> list[Record | None]:
    """The record on each (file, line start, line end); None where there is none.

    Reads only those byte ranges (each file opened once), so a caller that knows where
    its records are (the index keeps each row's line) need not read whole journals. A
    file that is gone or unreadable, a range that is not one complete line, or a
    malformed line gives None: the caller falls back to reading the journal, whose
    reader reports such lines.
    """
    found: list[Record | None] = []
    handles: dict[Path, BinaryIO | None] = {}
    try:
        for path, start, end in spans:
            if path not in handles:
                try:
                    handles[path] = open(path, "rb")
                except OSError:
                    handles[path] = None
            handle = handles[path]
            data = None
            if handle is not None:
                try:
                    data = os.pread(handle.fileno(), end - start, start)
                except OSError:
                    data = None
            found.append(decode_line(data) if data and data.endswith(b"\n") else None)
    finally:
        for handle in handles.values():
            if handle is not None:
                handle.close()
    return found


def parse_lines(data: bytes, start: int, *, path: Path, quarantine_dir: Path | None) -> ReadResult:
    """Parse the bytes of a journal that begin at offset ``start``."""
    records: list[StoredRecord] = []
    quarantined: list[int] = []
    position = 0
    size = len(data)
    while position < size:
        newline = data.find(b"\n", position)
        if newline < 0:
            break
        line = data[position:newline]
        offset = start + position
        position = newline + 1
        if not line.strip():
            continue
        record = decode_line(line)
        if record is None:
            quarantined.append(offset)
            if quarantine_dir is not None:
                _quarantine(path, offset, line, quarantine_dir)
            continue
        records.append(StoredRecord(offset, start + position, record))
    torn = size - position
    if quarantined:
        log.warning("journal %s: skipped %d malformed line(s) at offsets %s", path, len(quarantined), quarantined[:5])
    return ReadResult(records, start + position, torn, quarantined)


def _quarantine(path: Path, offset: int, line: bytes, quarantine_dir: Path) -> None:
    target = quarantine_dir / f"{path.parent.name}--{path.name}.{offset}.bad"
    if target.exists():
        return
    try:
        target.write_bytes(line + b"\n")
    except OSError as exc:  # quarantine is a courtesy copy; the line stays in the journal
        log.warning("could not copy malformed line of %s to %s: %s", path, target, exc)


def free_bytes(folder: Path) -> int | None:
    """Bytes the disk of ``folder`` has free for this process; None when that cannot be told."""
    try:
        room = os.statvfs(folder)
    except OSError:
        return None
    return room.f_bavail * room.f_frsize
