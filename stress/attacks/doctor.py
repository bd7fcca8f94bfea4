"""``ctxtrio doctor``, plain and ``--repair``, where it is hardest: a full disk, another process holding
every lock, and ``kill -9`` in the middle of a repair.

Each row runs the real command (``python -m ctxtrio doctor``) with ``--embed-model`` against the
fake embeddings endpoint of the tests served on loopback (no request needs to succeed: doctor asks
for one vector). Plain doctor must change no file (every path's bytes but SQLite's ``-shm``, and
no path added or gone); ``--repair`` must never lose a journal byte or an older file's vectors, and
must say what to do, not to delete a file that cost an endpoint call a vector.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import struct
import subprocess
import sys
import time
from contextlib import closing
from typing import TYPE_CHECKING

import trio

from ctxtrio._app import open_context
from ctxtrio._config import Config
from ctxtrio.store.read_only import read_only
from testkit.disk import fill_disk
from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings
from testkit.processes import read_line

from . import ROOT, Row, guarded
from ._store_kit import tmpfs

if TYPE_CHECKING:
    from pathlib import Path

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
#: Vectors of an older layout each row's file holds: what --repair must keep (they cost a request each).
OLDER = 5


def _command(data: Path, url: str, *args: str) -> list[str]:
    return [
        sys.executable, "-m", "ctxtrio", "doctor", *args, "--data-dir", str(data), "--no-llm",
        "--embed-model", "fake-embed", "--embed-base-url", url,
    ]  # fmt: skip


def _doctor(data: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(data, url, *args), cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120, check=False
    )


def _paths(data: Path) -> dict[str, str | None]:
    """Every path under ``data`` -> its bytes' digest (None: a folder, or SQLite's shared memory ``-shm``)."""
    return {
        str(p.relative_to(data)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file() and not p.name.endswith("-shm")
        else None
        for p in sorted(data.rglob("*"))
    }


def _journals(data: Path) -> dict[str, str | None]:
    return {name: digest for name, digest in _paths(data).items() if name.endswith(".jsonl")}


def _line(ran: subprocess.CompletedProcess[str], area: str) -> str:
    return next((one for one in ran.stdout.splitlines() if one[4:].startswith(f"{area}:")), "(no line)")


def _schema_3(path: Path, journals: list[str]) -> None:
    """A vectors file as schema 3 kept it (one table, each row with its vector): OLDER parts of item 0 of each journal."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "CREATE TABLE vectors (model TEXT NOT NULL, dim INTEGER NOT NULL, journal TEXT NOT NULL, "
            "item TEXT NOT NULL, part INTEGER NOT NULL, line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, "
            "span_start INTEGER NOT NULL, span_end INTEGER NOT NULL, vec BLOB NOT NULL, "
            "PRIMARY KEY (model, dim, journal, item, part))"
        )
        blob = struct.pack("24f", *([1.0] + [0.0] * 23))
        rows = [(journal, "0", part, blob) for journal in journals for part in range(OLDER)]
        conn.executemany("INSERT INTO vectors VALUES ('fake-embed', 24, ?, ?, ?, 0, 1, 0, 4, ?)", rows)
        conn.execute("PRAGMA user_version = 3")
        conn.commit()


def _older_kept(path: Path, journals: int) -> bool:
    """Whether the vectors file still holds every older vector, as schema 3 or migrated (``legacy``);
    read as doctor reads (nothing left beside the file, a killed writer's -wal read)."""

    def count(conn: sqlite3.Connection) -> int:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        table = "legacy" if "legacy" in tables else "vectors"
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    return read_only(path, count, busy_s=5.0) == OLDER * journals


async def _store(data: Path, documents: int) -> list[str]:
    """``documents`` documents and a session entry stored, the index deleted (--repair rebuilds it)
    and a schema-3 vectors file; the document journals' names."""
    async with open_context(Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        for n in range(documents):
            sections = "\n\n".join(f"## Part {k}\n\nThe quoll {n} was seen {k} times." for k in range(20))
            await ctx.documents.ingest(text=f"# Quolls {n}\n\n{sections}\n", title=f"quolls {n}")
        await ctx.sessions.append("s", "the deploy runs at noon")
    journals = sorted(p.relative_to(data).as_posix() for p in (data / "docs").glob("*/*.jsonl"))
    _schema_3(data / "vectors.sqlite3", journals)
    (data / "index.sqlite3").unlink()
    return journals


async def _full_disk(work: Path, url: str) -> Row:
    name = "doctor and doctor --repair on a full disk (4 MB tmpfs filled to the last byte)"
    mount = work / "mnt"
    with tmpfs(mount, "4m") as mounted:
        if not mounted:
            return Row(name, "--repair keeps every vector", "not run: mounting a tmpfs needs root", False)
        data = mount / "data"
        journals = await _store(data, 3)
        fill_disk(mount / "filler")
        before = _paths(data)
        plain = await trio.to_thread.run_sync(lambda: _doctor(data, url))
        same = _paths(data) == before
        repaired = await trio.to_thread.run_sync(lambda: _doctor(data, url, "--repair"))
        kept = _journals(data) == {k: v for k, v in before.items() if k.endswith(".jsonl")}
        older = _older_kept(data / "vectors.sqlite3", len(journals))
        (mount / "filler").unlink()
        again = await trio.to_thread.run_sync(lambda: _doctor(data, url, "--repair"))
    told = [_line(repaired, area) for area in ("embeddings", "session vectors")]
    held = (
        plain.returncode == 1
        and "the disk is full" in _line(plain, "data dir")
        and same
        and repaired.returncode == 1
        and all("no room on the disk" in line and "delete" not in line for line in told if line.startswith("BAD"))
        and "Traceback" not in repaired.stderr
        and kept
        and older
        and again.returncode == 0
        and "in step" in _line(again, "index")
        and f"{OLDER * len(journals):,} vectors of an older layout" in _line(again, "embeddings")
    )
    return Row(
        name,
        "plain: exit 1 naming the full disk, no file changed; --repair: exit 1, says no room (never 'delete'), "
        "journals and the older vectors kept; with room again --repair: exit 0, in step, the vectors kept",
        f"plain exit {plain.returncode}, files {'same' if same else 'CHANGED'}; --repair exit {repaired.returncode}: "
        f"{told[0][:110]!r}; journals {'kept' if kept else 'CHANGED'}, older vectors {'kept' if older else 'LOST'}; "
        f"with room exit {again.returncode}: {_line(again, 'index')[:40]!r}",
        held,
    )


#: Another process (a server in the middle of writing): a write transaction open on the index and both
#: vectors files, and the journal locks of a session and of the catalog held, until stdin closes.
HOLDER = """
import fcntl, os, sqlite3, sys
data = sys.argv[1]
held = [sqlite3.connect(f"{data}/{name}", isolation_level=None) for name in sys.argv[2:]]
for conn in held:
    conn.execute("BEGIN IMMEDIATE")
for name in ("sessions/s.jsonl", "docs/catalog.jsonl"):
    fcntl.flock(os.open(f"{data}/{name}", os.O_RDWR), fcntl.LOCK_EX)
print("ready", flush=True)
sys.stdin.read()
"""


async def _locked(work: Path, url: str) -> Row:
    data = work / "locked"
    journals = await _store(data, 3)
    ready = await trio.to_thread.run_sync(lambda: _doctor(data, url, "--repair"))  # index and vectors files made
    files = ("index.sqlite3", "vectors.sqlite3", "session-vectors.sqlite3")
    holder = await trio.lowlevel.open_process(
        [sys.executable, "-c", HOLDER, str(data), *files], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        said = await read_line(holder.stdout)
        before = _paths(data)
        started = time.perf_counter()
        plain = await trio.to_thread.run_sync(lambda: _doctor(data, url))
        took = time.perf_counter() - started
        same = _paths(data) == before
        repaired = await trio.to_thread.run_sync(lambda: _doctor(data, url, "--repair"))
        kept = _journals(data) == {k: v for k, v in before.items() if k.endswith(".jsonl")}
        older = _older_kept(data / "vectors.sqlite3", len(journals))
    finally:
        await holder.stdin.aclose()
        with trio.fail_after(30):
            await holder.wait()
    again = await trio.to_thread.run_sync(lambda: _doctor(data, url, "--repair"))
    index = _line(repaired, "index")
    held = (
        ready.returncode == 0
        and said == b"ready\n"
        and plain.returncode == 0
        and took < 15
        and same
        and repaired.returncode == 1
        and "run doctor --repair again" in index
        and "restart" not in index
        and kept
        and older
        and again.returncode == 0
    )
    return Row(
        "doctor and doctor --repair while another process holds the index, both vectors files and two journals",
        "plain: exit 0, every line ok, no wait on the locks, no file changed; --repair: exit 1, says run again "
        "(not 'until a restart'), journals kept; released: --repair exit 0",
        f"plain exit {plain.returncode} in {took:.1f} s, files {'same' if same else 'CHANGED'}; --repair exit "
        f"{repaired.returncode}: {index[:90]!r}; journals {'kept' if kept else 'CHANGED'}; released: exit {again.returncode}",
        held,
    )


async def _killed(work: Path, url: str) -> Row:
    data = work / "killed"
    journals = await _store(data, 2000)
    before = _journals(data)
    rounds, wrong, changed, states = (0.4, 0.8, 1.2, 1.6, 2.0), [], 0, []
    for delay in rounds:
        repair = await trio.lowlevel.open_process(
            _command(data, url, "--repair"), cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL
        )
        await trio.sleep(delay)
        repair.send_signal(signal.SIGKILL)
        await repair.wait()
        paths = _paths(data)
        version = read_only(
            data / "vectors.sqlite3", lambda conn: conn.execute("PRAGMA user_version").fetchone()[0], busy_s=5.0
        )
        states.append(f"{'index' if (data / 'index.sqlite3').exists() else 'none'}/v{version}")
        plain = await trio.to_thread.run_sync(lambda: _doctor(data, url))
        changed += _paths(data) != paths
        if (
            _journals(data) != before
            or not _older_kept(data / "vectors.sqlite3", len(journals))
            or plain.returncode not in (0, 1)
            or "Traceback" in plain.stderr
        ):
            wrong.append(delay)
    again = await trio.to_thread.run_sync(lambda: _doctor(data, url, "--repair"))
    held = (
        not wrong
        and not changed
        and again.returncode == 0
        and "in step" in _line(again, "index")
        and f"{OLDER * len(journals):,} vectors of an older layout" in _line(again, "embeddings")
    )
    return Row(
        f"kill -9 of doctor --repair over {len(journals):,} documents (no index, a schema-3 vectors file) "
        f"at {', '.join(f'{d:g}' for d in rounds)} s",
        "journals byte-identical and the older vectors kept after every kill; plain doctor after each: no "
        "traceback, no file changed; a last --repair: exit 0, in step, every older vector kept",
        f"after each kill index/vectors version {' '.join(states)}; {len(wrong)} lost something {wrong}; plain doctor changed files after {changed}; last --repair exit "
        f"{again.returncode}: {_line(again, 'index')[:40]!r}, {_line(again, 'embeddings')[60:140]!r}",
        held,
    )


def run(work: Path) -> list[Row]:
    async def main() -> list[Row]:
        rows: list[Row] = []
        async with trio.open_nursery() as nursery:
            url = await serve_fake_embeddings(nursery, FakeEmbeddings(dimension=24))
            for name, attack, limit in (
                ("doctor on a full disk", _full_disk, 180),
                ("doctor beside held locks", _locked, 180),
                ("kill -9 mid doctor --repair", _killed, 300),
            ):
                rows += await guarded(name, lambda attack=attack: attack(work, url), limit)  # type: ignore[misc]
            nursery.cancel_scope.cancel()
        return rows

    return trio.run(main)
