"""Installing a whole journal at once: all of its records or none, never over another file.

An import must not leave half a session behind when it is killed, and must not land
on a journal that another process created meanwhile. So the records are written to a
temporary file beside the journal and fsynced, then hard-linked to the journal's name:
``link`` fails if the name exists, so the file appears whole, at once, or not at all.
A name that exists but holds no complete line (an appender opened it, or crashed
before its first line) is replaced under that file's lock, so an appender waiting for
it retries on the new file (appenders check the inode after locking). Anything else
is :class:`JournalExistsError`, and nothing is written.

A temporary file left by a process killed mid-install is removed by the next install
of the same journal (its process is gone). Blocking; runs in the writer's thread.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from typing import TYPE_CHECKING

from .reading import store_error
from .records import NewRecord, StoredRecord, encode_record
from .results import AppendResult, JournalExistsError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

__all__ = ["install_journal", "temporary_prefix"]


def temporary_prefix(path: Path) -> str:
    """How the temporary files of installs of ``path`` begin (``.<name>.import-``)."""
    return f".{path.name}.import-"


def install_journal(path: Path, new: Sequence[NewRecord], lock: Callable[[int, Path], None]) -> AppendResult:
    """Write ``new`` as the whole journal at ``path`` (sequence numbers from 1), durably.

    ``lock`` takes the journal's exclusive lock on a descriptor (the appender's, with
    its timeout). Raises :class:`JournalExistsError` when ``path`` holds a record.
    """
    now = time.time()
    stored: list[StoredRecord] = []
    chunks: list[bytes] = []
    offset = 0
    for seq, record in enumerate(new, start=1):
        data, line = encode_record(record, seq=seq, ts=now)
        stored.append(StoredRecord(offset, offset + len(line), data))
        chunks.append(line)
        offset += len(line)
    _remove_abandoned(path)
    temporary = path.with_name(f"{temporary_prefix(path)}{os.getpid()}-{secrets.token_hex(4)}")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(b"".join(chunks))
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            file_id = (os.fstat(fd).st_dev, os.fstat(fd).st_ino)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)
        except FileExistsError:
            _replace_empty(path, temporary, lock)
        _fsync_dir(path)
    except OSError as exc:
        raise store_error("import journal", path, exc) from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return AppendResult(path, stored, 0, offset, [], file_id)


def _replace_empty(path: Path, temporary: Path, lock: Callable[[int, Path], None]) -> None:
    while True:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                os.link(temporary, path)
                return
            except FileExistsError:
                continue
        try:
            lock(fd, path)
            try:
                if os.fstat(fd).st_ino != os.stat(path).st_ino:
                    continue  # replaced while we waited: look at the new file
            except FileNotFoundError:
                continue
            size = os.fstat(fd).st_size
            if b"\n" in os.pread(fd, min(size, 1 << 20), 0) or size > 1 << 20:
                raise JournalExistsError(f"journal {path} already holds records: nothing imported into it")
            os.replace(temporary, path)  # still under the old file's lock: its appenders retry
            return
        finally:
            os.close(fd)  # releases the lock


def _remove_abandoned(path: Path) -> None:
    """Remove temporary files of installs whose process is gone."""
    prefix = temporary_prefix(path)
    try:
        names = [name for name in os.listdir(path.parent) if name.startswith(prefix)]
    except OSError:
        return
    for name in names:
        pid_text = name[len(prefix) :].split("-", 1)[0]
        if pid_text.isdigit() and int(pid_text) != os.getpid() and not _alive(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(path.parent / name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _fsync_dir(path: Path) -> None:
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
