"""Plain ``ctxtrio doctor`` (no ``--repair``) writes nothing to the data dir: every file it reads is
byte-identical after it and no file appears beside them, also while another connection writes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import asynccontextmanager, closing
from typing import TYPE_CHECKING

import trio

import ctxtrio
from ctxtrio.store import vector_task
from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings
from testkit.processes import read_line

from .runner import cli
from .test_embeddings_cli import schema_3_file

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    import pytest

    from .runner import Ran

DOC = "# Deploys\n\nThe deploy runs at noon.\n\n## Rollback\n\nA rollback takes the previous image.\n"


def snapshot(data: Path) -> dict[str, bytes | None]:
    """Every path under ``data`` -> its bytes (None: a folder, or a ``-shm``: SQLite's shared memory, where
    every reader of a WAL file marks what it reads, a server's readers too)."""
    return {
        str(p.relative_to(data)): p.read_bytes() if p.is_file() and not p.name.endswith("-shm") else None
        for p in sorted(data.rglob("*"))
    }


@asynccontextmanager
async def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Path, FakeEmbeddings, str]]:
    """A data dir a server with an embedding endpoint (the fake, served over loopback) left: one
    document and one session entry, both embedded; the endpoint stays up for doctor."""
    monkeypatch.setattr(vector_task, "QUERY_S", 10.0)  # wiring, not latency: loopback HTTP on a loaded machine
    data = tmp_path / "data"
    fake = FakeEmbeddings(dimension=24)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        config = ctxtrio.Config(
            data_dir=data, llm_enabled=False, audit=False, embed_model=fake.model, embed_base_url=url
        )
        async with ctxtrio.open_context(config) as ctx:
            await ctx.documents.ingest(text=DOC, title="deploys")
            await ctx.sessions.append("s", "tokens expire after an hour")
            chunks, entries = ctx.documents.semantic, ctx.sessions.semantic
            assert chunks is not None and entries is not None
            with trio.fail_after(30):
                while not (chunks.status().chunks_embedded == chunks.status().chunks_total > 0 and _has_rows(ctx)):
                    chunks.wake()
                    entries.wake()
                    await trio.sleep(0.05)
        yield data, fake, url
        nursery.cancel_scope.cancel()


def _has_rows(ctx: ctxtrio.Context) -> bool:
    """Whether the session vectors file names the entry (the server's entry embedder is done)."""
    path = ctx.data.session_vectors_path
    if not path.exists():
        return False
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
        return "rows" in tables and conn.execute("SELECT count(*) FROM rows").fetchone()[0] > 0


async def doctor(data: Path, fake: FakeEmbeddings, url: str, *extra: str) -> Ran:
    return await cli(data, "doctor", "--embed-model", fake.model, "--embed-base-url", url, *extra)


def line(ran: Ran, area: str) -> str:
    return next(one for one in ran.out.splitlines() if one[4:].startswith(f"{area}:"))


async def test_plain_doctor_leaves_every_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index (opened for writing, its schema ensured: bytes changed), a current vectors file with a
    damaged vector (healed by a writer's open), a WAL-mode schema-3 session vectors file (a read-only
    connection left -wal and -shm beside it) and a journal with a malformed line (copied to
    quarantine/): after plain doctor all are byte-identical and no path is added; it still says what it found."""
    async with embedded(tmp_path, monkeypatch) as (data, fake, url):
        with closing(sqlite3.connect(data / "vectors.sqlite3")) as conn:
            conn.execute("UPDATE texts SET vec = substr(vec, 1, 8) WHERE rowid = (SELECT min(rowid) FROM texts)")
            conn.commit()
        (data / "session-vectors.sqlite3").unlink()
        schema_3_file(data / "session-vectors.sqlite3", "s", "e")
        with closing(sqlite3.connect(data / "session-vectors.sqlite3")) as conn:
            assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
        with (data / "sessions" / "s.jsonl").open("ab") as journal:
            journal.write(b"{not json\n")
        before = snapshot(data)
        ran = await doctor(data, fake, url)
        assert snapshot(data) == before
    assert "in step: 1 row for 1 document" in line(ran, "index"), ran.out
    assert "1 of 1 chunk embedded" in line(ran, "embeddings"), ran.out
    assert "session vectors file of an older layout (schema 3), left as it is" in line(ran, "session vectors")
    assert "1 malformed line, skipped (a server's read copies them to quarantine/)" in line(ran, "sessions")


#: The other process: the vectors file's rows deleted (committed, so in its -wal alone: no checkpoint
#: while it is open) and a write transaction left open on it and on the index, until stdin closes.
#: A process of its own, as a server is: a read of the file by this one (the snapshot) would drop
#: its POSIX locks (closing any descriptor of a file drops the process's locks on it).
WRITER = """
import sqlite3, sys
vectors = sqlite3.connect(sys.argv[1] + "/vectors.sqlite3", isolation_level=None)
index = sqlite3.connect(sys.argv[1] + "/index.sqlite3", isolation_level=None)
vectors.execute("DELETE FROM rows")
for conn in (vectors, index):
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("CREATE TABLE uncommitted (x)")
print("ready", flush=True)
sys.stdin.read()
for conn in (vectors, index):
    conn.execute("ROLLBACK")
    conn.close()
"""


async def test_plain_doctor_beside_a_writer_reads_its_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process (a server) holds the vectors file and the index open, its last commit only in
    its -wal and a write transaction open on each: doctor is not blocked, reads the committed rows (not
    the file's older state), and leaves the files, their -wal and the set of paths as they were."""
    async with embedded(tmp_path, monkeypatch) as (data, fake, url):
        writer = await trio.lowlevel.open_process(
            [sys.executable, "-c", WRITER, str(data)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert writer.stdin is not None and writer.stdout is not None
        try:
            assert await read_line(writer.stdout) == b"ready\n"
            assert (data / "vectors.sqlite3-wal").exists() and (data / "index.sqlite3-wal").exists()
            before = snapshot(data)
            ran = await doctor(data, fake, url)
            after = snapshot(data)
        finally:
            await writer.stdin.aclose()
            with trio.fail_after(30):
                await writer.wait()
    assert after == before
    assert writer.returncode == 0
    assert "0 of 1 chunk embedded" in line(ran, "embeddings"), ran.out
    assert "in step: 1 row for 1 document" in line(ran, "index"), ran.out


async def test_plain_doctor_says_a_damaged_index_is_bad_and_repair_rebuilds_it(tmp_path: Path) -> None:
    """An index file of garbage: plain doctor says BAD and names --repair, and leaves it as it is (a
    writer's open deletes and rebuilds it: the server's start, --repair); --repair rebuilds it."""
    data = tmp_path / "data"
    (tmp_path / "t.md").write_text(DOC)
    assert (await cli(data, "ingest", str(tmp_path / "t.md"))).code == 0
    (data / "index.sqlite3").write_bytes(b"not a database " * 400)
    before = snapshot(data)
    plain = await cli(data, "doctor")
    assert snapshot(data) == before
    repaired = await cli(data, "doctor", "--repair")
    assert plain.code == 1 and line(plain, "index").startswith("BAD index: search index"), plain.out
    assert "is damaged" in line(plain, "index") and "ctxtrio doctor --repair rebuilds it" in line(plain, "index")
    assert repaired.code == 0 and "in step" in line(repaired, "index"), repaired.out


async def test_plain_doctor_says_a_damaged_vectors_file_is_bad_and_repair_starts_it_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vectors file of garbage and a session vectors file cut short: plain doctor says BAD for each,
    names --repair and leaves them as they are; --repair starts both afresh, and a server embeds the
    chunk and the entry again (the fake endpoint is asked for their texts)."""
    async with embedded(tmp_path, monkeypatch) as (data, fake, url):
        chunks, entries = data / "vectors.sqlite3", data / "session-vectors.sqlite3"
        chunks.write_bytes(b"not a database " * 400)
        entries.write_bytes(entries.read_bytes()[:4096])
        before = snapshot(data)
        plain = await doctor(data, fake, url)
        assert snapshot(data) == before
        repaired = await doctor(data, fake, url, "--repair")
        fake.requests.clear()
        config = ctxtrio.Config(
            data_dir=data, llm_enabled=False, audit=False, embed_model=fake.model, embed_base_url=url
        )
        async with ctxtrio.open_context(config) as ctx:
            index = ctx.documents.semantic
            assert index is not None
            with trio.fail_after(30):
                while not (index.status().chunks_embedded == 1 and _has_rows(ctx)):
                    index.wake()
                    await trio.sleep(0.05)
    cure = "ctxtrio doctor --repair starts a damaged file afresh"
    assert plain.code == 1
    assert line(plain, "embeddings").startswith(f"BAD embeddings: vectors file: cannot read vectors file {chunks}")
    assert f"{cure}: every chunk is then embedded again" in line(plain, "embeddings")
    assert "database disk image is malformed" in line(plain, "session vectors")
    assert f"{cure}: every entry is then embedded again" in line(plain, "session vectors")
    assert repaired.code == 0, repaired.out
    assert "0 of 1 chunk embedded" in line(repaired, "embeddings")
    assert "0 of 1 live session entry embedded" in line(repaired, "session vectors")
    sent = [text for request in fake.requests for text in request]
    assert any("rollback takes the previous image" in text for text in sent), sent
    assert any("tokens expire after an hour" in text for text in sent), sent
