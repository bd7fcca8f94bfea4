"""The file operations under a journal append, each on an open descriptor (blocking).

:class:`~.journal.JournalAppender` composes them: take the lock, check the file is still
the one opened and ends where expected, write every line at once (through
:func:`~.journal_write.write_records`), fsync the folder of a new file. ``OSError``
becomes ``StoreError`` here (:func:`~.reading.store_error`).
"""

from __future__ import annotations

import errno
import fcntl
import os
from typing import TYPE_CHECKING

from .._errors import LockTimeoutError
from .reading import store_error
from .results import JournalChangedError

if TYPE_CHECKING:
    import threading
    from pathlib import Path

    from .._clock import ThreadClock

__all__ = ["check_end", "ends_with_newline", "fsync_dir", "lock_polling", "replaced", "write_all"]


def lock_polling(fd: int, path: Path, *, timeout_s: float, clock: ThreadClock, giving_up: threading.Event) -> None:
    """Take an exclusive ``flock`` on ``fd``, polling; LockTimeoutError after ``timeout_s`` or once ``giving_up`` is set."""
    # A blocking flock cannot be interrupted from trio, so poll with a short
    # backoff, bounded by the lock timeout. This runs in a worker thread, where
    # trio's clock is not available: the injected one serves.
    give_up_at = clock.now() + timeout_s
    pause = 0.0005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise store_error("lock journal", path, exc) from exc
        if giving_up.is_set():
            raise LockTimeoutError(f"journal {path} is locked by another process and the store is shutting down")
        if clock.now() >= give_up_at:
            raise LockTimeoutError(f"journal {path} stayed locked by another process for {timeout_s:g} s")
        clock.sleep(pause)
        pause = min(pause * 2, 0.05)


def check_end(fd: int, path: Path, expect_end: int) -> None:
    """JournalChangedError unless nothing but a torn fragment lies past ``expect_end``."""
    try:
        size = os.fstat(fd).st_size
        past = os.pread(fd, size - expect_end, expect_end) if size > expect_end else b""
    except OSError as exc:
        raise store_error("read journal", path, exc) from exc
    if size < expect_end or b"\n" in past:
        raise JournalChangedError(f"journal {path} changed since it was read: read it again")


def replaced(fd: int, path: Path) -> bool:
    """Whether ``path`` is no longer the file ``fd`` has open (removed or replaced by another process)."""
    try:
        return os.fstat(fd).st_ino != os.stat(path).st_ino
    except FileNotFoundError:
        return True
    except OSError as exc:
        raise store_error("stat journal", path, exc) from exc


def ends_with_newline(fd: int, path: Path, size: int) -> bool:
    """Whether the byte before ``size`` is a line feed."""
    try:
        return os.pread(fd, 1, size - 1) == b"\n"
    except OSError as exc:
        raise store_error("read journal", path, exc) from exc


def write_all(fd: int, path: Path, payload: bytes, size: int) -> None:
    """Write all of ``payload`` at the end; on failure cut the file back to ``size`` (no partial line)."""
    try:
        view = memoryview(payload)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        # Leave no partial line behind: cut the file back to where this append began.
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass
        raise store_error("append to journal", path, exc) from exc


def fsync_dir(directory: Path) -> None:
    """Make a new file's directory entry durable."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
