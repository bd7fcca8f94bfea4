"""A vectors file whose writer is killed (SIGKILL) at any point opens, and is consistent: every
row's text is there, the in-memory matrix loads, and an older file is migrated whole or not at all."""

from __future__ import annotations

import random
import signal
import sqlite3
import struct
import subprocess
import sys
import time
from pathlib import Path

from ctxtrio.store.vector_schema import ROWS_VERSION
from ctxtrio.store.vectors import VectorStore

ROOT = Path(__file__).resolve().parents[2]
DIM = 8


def _killed_at_random(path: Path, seed: int, *, after: bytes) -> None:
    """Start the worker on ``path``, let it write for a random moment after it said ``after`` (``open``: the file is
    open; ``stored``: its first batch is), SIGKILL it."""
    command = [sys.executable, "-m", "tests.store.vector_worker", str(path), str(seed)]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE) as worker:
        try:
            assert worker.stdout is not None and worker.stdout.readline() == b"open\n"
            assert after == b"open" or worker.stdout.readline() == after + b"\n"
            time.sleep(random.Random(seed).uniform(0.0, 0.4))
        finally:
            worker.kill()


def _consistent(path: Path) -> int:
    """Rows of the file once opened again; fails unless it is whole and every row's text is stored."""
    store = VectorStore(path)
    store.open()
    hits = store.nearest("m", [1.0] + [0.0] * (DIM - 1), journals=None, limit=5)
    store.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA user_version").fetchone() == (ROWS_VERSION,)
        orphans = conn.execute(
            "SELECT count(*) FROM rows AS r LEFT JOIN texts AS t ON t.model = r.model AND t.dim = r.dim "
            "AND t.digest = r.digest WHERE r.digest IS NOT NULL AND t.digest IS NULL"
        ).fetchone()[0]
        assert orphans == 0
        rows = int(conn.execute("SELECT count(*) FROM rows").fetchone()[0])
    finally:
        conn.close()
    assert (rows > 0) == bool(hits)
    return rows


def test_a_writer_killed_at_any_point_leaves_a_consistent_file(tmp_path: Path) -> None:
    """Five kills at random moments of adds, drops and evictions: after each, the file opens consistent. The first
    may come before anything is stored; the others come after the worker's first batch, so the file holds rows
    whatever the machine's pace (a 0-0.4 s window from the open alone ended before any was stored at load 12)."""
    path = tmp_path / "v.sqlite3"
    counts = []
    for seed in range(5):
        _killed_at_random(path, seed, after=b"open" if seed == 0 else b"stored")
        counts.append(_consistent(path))
    assert all(counts[1:]), counts


def test_a_writer_killed_inside_a_statement_leaves_a_consistent_file(tmp_path: Path) -> None:
    """Six kills inside SQLite statements (the worker SIGKILLs itself from the progress handler, at a step the seed
    sets, in its first few rounds of adds, drops and evictions): after each, the file opens consistent."""
    path = tmp_path / "v.sqlite3"
    for seed in range(6):
        step = random.Random(seed).randint(1, 3_000)
        command = [sys.executable, "-m", "tests.store.vector_worker", str(path), str(seed), str(step)]
        worker = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, timeout=300, check=False)
        assert worker.returncode == -signal.SIGKILL, (step, worker.returncode)  # (its own kill, not a failure)
        _consistent(path)


def test_a_migration_killed_leaves_the_old_file_or_the_new_one(tmp_path: Path) -> None:
    """A schema-3 file of 20,000 rows whose worker is killed at its start: the file is the old one,
    every row in it, or the new layout (the migration is one transaction; measured, it had
    committed 0.1 s after the worker's start), and it opens consistent after."""
    path = tmp_path / "v.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE vectors (model TEXT NOT NULL, dim INTEGER NOT NULL, journal TEXT NOT NULL, item TEXT NOT NULL, "
        "part INTEGER NOT NULL, line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, span_start INTEGER NOT NULL, "
        "span_end INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, dim, journal, item, part))"
    )
    blob = struct.pack(f"{DIM}f", *([1.0] + [0.0] * (DIM - 1)))
    conn.executemany(
        "INSERT INTO vectors VALUES ('m', ?, 'j', ?, 0, 0, 1, 0, 4, ?)", [(DIM, str(n), blob) for n in range(20_000)]
    )
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    for seed in range(3):
        command = [sys.executable, "-m", "tests.store.vector_worker", str(path), str(seed)]
        with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL) as worker:
            time.sleep(random.Random(seed).uniform(0.05, 0.6))  # (the interpreter's start takes most of it)
            worker.kill()
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if version == 3:  # killed before the migration's commit: the old file, every row in it
                assert conn.execute("SELECT count(*) FROM vectors").fetchone() == (20_000,)
            else:
                assert version == ROWS_VERSION and {"meta", "texts", "rows"} <= tables and "vectors" not in tables
        finally:
            conn.close()
    _consistent(path)
