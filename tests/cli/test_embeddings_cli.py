"""doctor's embeddings lines: the endpoint answers or not, the model's dimension, how much is embedded (chunks, session entries)."""

from __future__ import annotations

import sqlite3
import struct
from contextlib import closing
from typing import TYPE_CHECKING

import trio

import ctxtrio
from ctxtrio.memory.state.base import entry_key
from ctxtrio.store.vectors import VectorRow, VectorStore
from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings
from testkit.fake_openai import closed_port_url
from testkit.sqlite_lock import write_lock_held

from .runner import cli

if TYPE_CHECKING:
    from pathlib import Path


async def test_doctor_says_whether_embeddings_work(tmp_path: Path) -> None:
    """Off without --embed-model; with it, the dimension and 0 of N embedded; a dead endpoint fails the check."""
    data = tmp_path / "data"
    (tmp_path / "t.md").write_text("# T\n\nSome words here.\n")
    assert (await cli(data, "ingest", str(tmp_path / "t.md"))).code == 0
    off = (await cli(data, "doctor", "--json")).json()
    assert (
        off["ok"] and "off (no --embed-model)" in [c for c in off["checks"] if c["area"] == "embeddings"][0]["detail"]
    )
    fake = FakeEmbeddings(dimension=24)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        on = await cli(data, "doctor", "--embed-model", fake.model, "--embed-base-url", url)
        nursery.cancel_scope.cancel()
    assert on.code == 0, on.out
    assert f"ok  embeddings: fake-embed at {url} works, 24 dimensions; 0 of 1 chunk embedded" in on.out
    dead = await cli(data, "doctor", "--json", "--embed-model", "m", "--embed-base-url", closed_port_url())
    facts = dead.json()
    assert dead.code == 1 and facts["embeddings"]["reachable"] is False and facts["embeddings"]["chunks"] == 1


async def test_doctor_checks_and_repairs_the_session_vectors(tmp_path: Path) -> None:
    """With --embed-model, doctor counts the live session entries embedded; --repair drops another model's vectors."""
    data = tmp_path / "data"
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        entry = (await ctx.sessions.append("s", "the deploy runs at noon")).entry
        await ctx.sessions.append("s", "tokens expire after an hour")
    vectors = VectorStore(data / "session-vectors.sqlite3")
    vectors.open()
    vectors.add("old-model", 3, [VectorRow("s", entry_key(entry.id, entry.text), 0, 0, 0, [1.0, 0.0, 0.0])])
    vectors.close()
    fake = FakeEmbeddings(dimension=24)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        flags = ("--embed-model", fake.model, "--embed-base-url", url)
        checked = await cli(data, "doctor", "--json", *flags)
        repaired = await cli(data, "doctor", "--repair", *flags)
        nursery.cancel_scope.cancel()
    assert checked.code == 0, checked.out
    assert checked.json()["session_vectors"] == {
        "dimension": 24,
        "entries": 2,
        "embedded": 0,
        "dropped": 0,
        "unmigrated": False,
        "retried": 0,
    }
    assert repaired.code == 0, repaired.out
    # Rows, not vectors: a vector stays while the server keeps texts no row names (store/vectors.py).
    line = "ok  session vectors: 0 of 2 live session entries embedded; dropped 1 vector row of sessions or entries gone"
    assert line in repaired.out, repaired.out


def schema_3_file(path: Path, journal: str, item: str) -> None:
    """A vectors file as schema 3 kept it (one table, each row with its vector): two parts of one item."""
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE vectors (model TEXT NOT NULL, dim INTEGER NOT NULL, journal TEXT NOT NULL, item TEXT NOT NULL, "
        "part INTEGER NOT NULL, line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, span_start INTEGER NOT NULL, "
        "span_end INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, dim, journal, item, part))"
    )
    blob = struct.pack("24f", *([1.0] + [0.0] * 23))
    conn.executemany(
        "INSERT INTO vectors VALUES ('fake-embed', 24, ?, ?, ?, 0, 1, 0, 4, ?)",
        [(journal, item, part, blob) for part in range(2)],
    )
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()


async def test_doctor_leaves_an_older_vectors_file_as_it_is_and_repair_migrates_it(tmp_path: Path) -> None:
    """Vectors files of schema 3 (chunks and session entries): plain doctor writes nothing to them
    (byte-identical after; an older server still running on the data dir keeps its table) and says the
    server or --repair migrates them; --repair does, and then says how many vectors of the older
    layout the server takes at its next start, without requests (lest the file be deleted)."""
    data = tmp_path / "data"
    (tmp_path / "t.md").write_text("# T\n\nSome words here.\n")
    assert (await cli(data, "ingest", str(tmp_path / "t.md"))).code == 0
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        await ctx.sessions.append("s", "the deploy runs at noon")
    chunks, entries = data / "vectors.sqlite3", data / "session-vectors.sqlite3"
    schema_3_file(chunks, "docs/t/g.jsonl", "0")
    schema_3_file(entries, "s", "e")
    before = chunks.read_bytes(), entries.read_bytes()
    fake = FakeEmbeddings(dimension=24)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        flags = ("--json", "--embed-model", fake.model, "--embed-base-url", url)
        said = await cli(data, "doctor", *flags)
        after = chunks.read_bytes(), entries.read_bytes()
        repaired = await cli(data, "doctor", "--repair", *flags)
        nursery.cancel_scope.cancel()
    assert said.code == 0, said.out
    assert after == before
    facts = said.json()
    assert facts["embeddings"]["older"] == 2 and facts["embeddings"]["unmigrated"] is True
    assert facts["session_vectors"]["unmigrated"] is True
    lines = {c["area"]: c["detail"] for c in facts["checks"]}
    left = "vectors file of an older layout (schema 3), left as it is: the server's next start or doctor --repair"
    assert f"0 of 1 chunk embedded; {left} migrates it, its 2 vectors then taken with no request" in lines["embeddings"]
    assert f"0 of 1 live session entry embedded; session {left} migrates it" in lines["session vectors"]
    assert repaired.code == 0, repaired.out
    facts = repaired.json()
    assert facts["embeddings"]["unmigrated"] is False and facts["session_vectors"]["unmigrated"] is False
    line = next(c["detail"] for c in facts["checks"] if c["area"] == "embeddings")
    assert "0 of 1 chunk embedded; 2 vectors of an older layout, taken at the server's next start" in line
    for path in (chunks, entries):
        with closing(sqlite3.connect(path)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == 4


async def test_doctor_says_a_locked_vectors_file_is_busy_not_broken(tmp_path: Path) -> None:
    """Another process holding the vectors file's write lock (a server writing) while doctor --repair
    must write to it (here: a file of a newer layout, taken over): doctor says to run again, never to
    delete a file that cost an endpoint call a vector."""
    data = tmp_path / "data"
    (tmp_path / "t.md").write_text("# T\n\nSome words here.\n")
    assert (await cli(data, "ingest", str(tmp_path / "t.md"))).code == 0
    vectors_path = next(data.rglob("index.sqlite3")).parent / "vectors.sqlite3"
    store = VectorStore(vectors_path)
    store.open()
    store.close()
    other = sqlite3.connect(vectors_path, isolation_level=None)
    other.execute("PRAGMA user_version = 99")
    other.execute("BEGIN IMMEDIATE")
    try:
        fake = FakeEmbeddings(dimension=24)
        async with trio.open_nursery() as nursery:
            url = await serve_fake_embeddings(nursery, fake)
            ran = await cli(data, "doctor", "--repair", "--embed-model", fake.model, "--embed-base-url", url)
            nursery.cancel_scope.cancel()
    finally:
        other.execute("ROLLBACK")
        other.close()
    line = next(line for line in ran.out.splitlines() if "embeddings" in line)
    assert ran.code == 1 and "another process holds it, run doctor again" in line and "delete" not in line, ran.out


async def test_doctor_repair_says_a_locked_index_is_busy_not_broken(tmp_path: Path) -> None:
    """Another process holding the index's write lock (a server writing) when doctor --repair opens it:
    the index line says to run --repair again, not that documents are off until a restart."""
    data = tmp_path / "data"
    (tmp_path / "t.md").write_text("# T\n\nSome words here.\n")
    assert (await cli(data, "ingest", str(tmp_path / "t.md"))).code == 0
    with write_lock_held(data / "index.sqlite3"):
        ran = await cli(data, "doctor", "--repair")
    line = next(line for line in ran.out.splitlines() if line.startswith("BAD index"))
    assert ran.code == 1 and "held the search index's write lock: run doctor --repair again" in line, ran.out
    assert "restart" not in line
