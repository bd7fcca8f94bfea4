"""store/read_only: a read of a SQLite file that writes nothing, creates nothing, and sees every commit."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from typing import TYPE_CHECKING

import pytest

from ctxtrio.store import read_only as read_only_module
from ctxtrio.store.read_only import read_only

if TYPE_CHECKING:
    from pathlib import Path


def wal_file(path: Path, *values: int) -> None:
    """A WAL-mode file with one table holding ``values``, closed (so no -wal or -shm beside it)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [(v,) for v in values])


def count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM t").fetchone()[0])


def test_a_file_nobody_holds_is_read_with_nothing_left_beside_it(tmp_path: Path) -> None:
    """No -wal beside the file: it is read as it is, byte-identical after, and no -wal or -shm appears
    (SQLite's mode=ro alone creates both and cannot delete them)."""
    path = tmp_path / "x.sqlite3"
    wal_file(path, 1, 2)
    before = path.read_bytes()
    assert read_only(path, count, busy_s=1.0) == 2
    assert os.listdir(tmp_path) == ["x.sqlite3"] and path.read_bytes() == before


def test_a_commit_in_a_writers_wal_is_read_and_its_files_are_left(tmp_path: Path) -> None:
    """A connection holds the file with a commit in its -wal alone and a write transaction open: the
    read is not blocked and sees the commit (an immutable read of the file would not), and the file
    and its -wal keep their size and time."""
    path = tmp_path / "x.sqlite3"
    wal_file(path, 1)
    with closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("INSERT INTO t VALUES (2)")
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO t VALUES (3)")
        # (stat, not read: closing a descriptor of the file would drop this process's locks on it)
        stamps = {
            name: (os.stat(tmp_path / name).st_size, os.stat(tmp_path / name).st_mtime_ns)
            for name in os.listdir(tmp_path)
            if not name.endswith("-shm")
        }
        assert read_only(path, count, busy_s=1.0) == 2
        after = {
            name: (os.stat(tmp_path / name).st_size, os.stat(tmp_path / name).st_mtime_ns)
            for name in os.listdir(tmp_path)
            if not name.endswith("-shm")
        }
        writer.execute("ROLLBACK")
    assert after == stamps and set(stamps) == {"x.sqlite3", "x.sqlite3-wal"}


def test_a_writer_killed_with_commits_in_its_wal_is_read_and_its_files_kept(tmp_path: Path) -> None:
    """A process killed (SIGKILL) with five commits in its -wal alone: they are read, and the file and the
    -wal are byte-identical after (no checkpoint, no recovery written to them)."""
    path = tmp_path / "x.sqlite3"
    wal_file(path)
    writer = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(path)], capture_output=True, timeout=60, check=False
    )
    assert writer.returncode == -signal.SIGKILL and writer.stdout == b"written\n"
    wal = tmp_path / "x.sqlite3-wal"
    before = path.read_bytes(), wal.read_bytes()
    assert read_only(path, count, busy_s=1.0) == 5
    assert (path.read_bytes(), wal.read_bytes()) == before


#: Five commits, then killed before closing (a close would checkpoint them into the file and delete the -wal).
KILLED_WRITER = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
for n in range(5):
    conn.execute("INSERT INTO t VALUES (?)", (n,))
print("written", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_file_changed_during_the_read_is_read_again(tmp_path: Path) -> None:
    """A server opens the file, commits and closes during the read (its close checkpoints into the file
    and deletes its -wal): the file changed under the immutable read, so it is read again, and the
    answer is the file after the commit."""
    path = tmp_path / "x.sqlite3"
    wal_file(path, 1)
    seen: list[int] = []

    def query(conn: sqlite3.Connection) -> int:
        seen.append(count(conn))
        if len(seen) == 1:
            with closing(sqlite3.connect(path, isolation_level=None)) as other:
                other.execute("INSERT INTO t VALUES (2)")
        return seen[-1]

    assert read_only(path, query, busy_s=1.0) == 2
    assert seen == [1, 2] and os.listdir(tmp_path) == ["x.sqlite3"]


def test_a_file_changed_under_every_read_is_read_through_the_wal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that changes under each of the TRIES reads that take it for unchanged is read once more
    with mode=ro (the last try), whose answer is the file's as it is then."""
    monkeypatch.setattr(read_only_module, "TRIES", 2)
    path = tmp_path / "x.sqlite3"
    wal_file(path, 1)
    seen: list[int] = []

    def query(conn: sqlite3.Connection) -> int:
        seen.append(count(conn))
        if len(seen) <= 2:
            with closing(sqlite3.connect(path, isolation_level=None)) as other:
                other.execute("INSERT INTO t VALUES (0)")
        return seen[-1]

    assert read_only(path, query, busy_s=1.0) == 3
    assert seen == [1, 2, 3]


def test_a_missing_file_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    """No file: sqlite3's error (the caller says so), and none created."""
    with pytest.raises(sqlite3.OperationalError):
        read_only(tmp_path / "gone.sqlite3", count, busy_s=1.0)
    assert os.listdir(tmp_path) == []
