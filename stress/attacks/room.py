"""Full-disk attacks on the real server (issue 11: W3; "journals first" on a full disk, store/room.py).

Every attack runs ``python -m ctxtrio`` (the stdio server through the SDK client, or the CLI)
on a data dir in a small tmpfs, fills the disk around it, and checks what the server says,
that nothing acknowledged is lost, and that what a full disk turned off comes back once
there is room, with no restart. Mounting a tmpfs needs root; elsewhere every row says it was
not run (and does not hold). Each spawn is bounded (60 s); nothing leaves loopback.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import trio

from testkit.disk import fill_disk
from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings

from . import Row, guarded
from . import stdio_server as _server
from ._store_kit import TEXT, guide_says, run_on, tmpfs
from ._store_kit import call as _call
from ._store_kit import searchable as _searchable

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Awaitable, Callable
    from pathlib import Path


NOT_RUN = "not run: needs root to mount a tmpfs"


def _ctxtrio(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A CLI subcommand on ``data`` (no LLM), run to completion."""
    return run_on(data, [sys.executable, "-m", "ctxtrio", *args, "--data-dir", str(data), "--no-llm"])


async def disk_full(work: Path) -> Row:
    with tmpfs(work / "w3-mnt", "4m") as mounted:
        if not mounted:
            return Row(
                "W3 disk full during doc_ingest",
                '"No space left on device"',
                "not run: needs root to mount a tmpfs",
                False,
            )
        big = "\n\n".join(f"Paragraph {n}: the platypus count was {n} on that day." for n in range(110_000))
        async with _server(work / "w3-mnt" / "data") as client:
            ok, said = await _call(client, "doc_ingest", text=big, title="big")
            after, _ = await _call(client, "doc_ingest", text="The echidna lays eggs.", doc_id="e")
    clear = not ok and "No space left on device" in said
    return Row(
        "W3 disk full during doc_ingest (6 MB onto a 4 MB tmpfs)",
        '"No space left on device"; serves on',
        f"...{said[-60:]!r}; small ingest after: {'ok' if after else 'failed'}",
        clear and after,
    )


async def full_at_start(work: Path) -> Row:
    fault = "a server started on a full disk: its search index cannot be opened"
    expected = "search says no room, recall answers; search back once room is freed, no restart"
    with tmpfs(work / "r1-mnt", "4m") as mounted:
        if not mounted:
            return Row(fault, expected, NOT_RUN, False)
        data = work / "r1-mnt" / "data"
        async with _server(data) as client:
            await _call(client, "doc_ingest", text=TEXT, doc_id="q")
            await _call(client, "context_append", session_id="s", text="the wombat note")
        fill_disk(work / "r1-mnt" / "filler")
        async with _server(data) as client:
            off, said = await _call(client, "doc_search", query="quoll")
            recalled, note = await _call(client, "context_recall", session_id="s", query="wombat")
            (work / "r1-mnt" / "filler").unlink()
            back, _ = await _searchable(client)
    says_room = not off and "no room" in said and "restart" not in said
    return Row(
        fault,
        expected,
        f"search: ...{said[-70:]!r}; recall {'ok' if recalled else 'failed'}; freed: {'found' if back else 'missing'}",
        says_room and recalled and "wombat" in note and back,
    )


async def prune_and_import(work: Path) -> Row:
    fault = "ctxtrio prune and ctxtrio import on a disk filled to the last byte"
    expected = "both done in the index's room; live entries kept; no temporary file left"
    source = work / "r2-src"
    async with _server(source) as client:
        for number in range(20):
            await _call(client, "context_append", session_id="other", text=f"imported note {number} " + "i" * 500)
    exported = _ctxtrio(source, "export", "other")
    (work / "r2.jsonl").write_text(exported.stdout)
    with tmpfs(work / "r2-mnt", "4m") as mounted:
        if not mounted:
            return Row(fault, expected, NOT_RUN, False)
        data = work / "r2-mnt" / "data"
        async with _server(data) as client:
            await _call(client, "doc_ingest", text=TEXT, doc_id="q")
            for number in range(40):
                await _call(client, "context_append", session_id="s", text=f"note {number} " + "n" * 1000)
            await _call(client, "context_compact", session_id="s", keep_recent=5)
            await _searchable(client)
        live = _live(data)
        fill_disk(work / "r2-mnt" / "filler")
        pruned = _ctxtrio(data, "prune", "--older-than", "0", "--yes")
        imported = _ctxtrio(data, "import", str(work / "r2.jsonl"))
        after = _live(data)
        left = [path.name for path in (data / "sessions").iterdir() if path.name.startswith(".")]
    done = pruned.returncode == 0 and imported.returncode == 0
    kept = after.get("s") == live.get("s") and after.get("other") == 20
    return Row(
        fault,
        expected,
        f"prune exit {pruned.returncode}, import exit {imported.returncode} {(pruned.stderr + imported.stderr)[-60:]!r}; "
        f"live {live} -> {after}; temporaries {left}",
        done and kept and not left,
    )


def _live(data: Path) -> dict[str, int]:
    """Live entries of each session, as ``ctxtrio sessions --json`` lists them."""
    listed = _ctxtrio(data, "sessions", "--json")
    return {str(info["session_id"]): int(info["live_entries"]) for info in json.loads(listed.stdout or "[]")}


async def snapshot_room(work: Path) -> Row:
    fault = "a 560 KB session loaded with 900 KB free, then 700 KB of notes"
    expected = "no snapshot takes the notes' room: all 70 stored"
    with tmpfs(work / "r3-mnt", "4m") as mounted:
        if not mounted:
            return Row(fault, expected, NOT_RUN, False)
        data = work / "r3-mnt" / "data"
        async with _server(data) as client:
            for number in range(500):
                await _call(client, "context_append", session_id="s", text=f"note {number} " + "w" * 1000)
        fill_disk(work / "r3-mnt" / "filler", leave_bytes=900_000)
        stored = 0
        async with _server(data) as client:
            await _call(client, "context_recall", session_id="s", query="note 7")
            for number in range(70):
                ok, said = await _call(client, "context_append", session_id="s", text=f"late {number} " + "v" * 10_000)
                stored += ok
        snapshot = (data / "sessions" / "s.snapshot").exists()
    return Row(fault, expected, f"{stored} of 70 stored; snapshot written: {snapshot}", stored == 70 and not snapshot)


async def vectors_room(work: Path) -> Row:
    fault = "--embed-model on a disk with less than 1 MiB free"
    expected = "no vector takes the room: embedding waits, says so, and goes on once room is freed"
    with tmpfs(work / "r4-mnt", "4m") as mounted:
        if not mounted:
            return Row(fault, expected, NOT_RUN, False)
        fake = FakeEmbeddings()
        async with trio.open_nursery() as nursery:
            url = await serve_fake_embeddings(nursery, fake)
            data = work / "r4-mnt" / "data"
            fill_disk(work / "r4-mnt" / "filler", leave_bytes=600_000)
            async with _server(data, "--embed-model", fake.model, "--embed-base-url", url) as client:
                await _call(client, "doc_ingest", text=TEXT, doc_id="q")
                waiting = await guide_says(client, "waiting for room on the disk")
                (work / "r4-mnt" / "filler").unlink()
                caught_up = await guide_says(client, "caught up")
            nursery.cancel_scope.cancel()
    return Row(
        fault,
        expected,
        f"said waiting: {waiting}; then caught up: {caught_up} ({len(fake.requests)} request(s))",
        waiting and caught_up,
    )


async def vectors_kept(work: Path) -> Row:
    fault = "--embed-model: a server started again on a disk filled to the last byte"
    expected = (
        "vectors file kept as it was (waiting for room if the index's room is not enough); caught up, no call again"
    )
    with tmpfs(work / "r5-mnt", "4m") as mounted:
        if not mounted:
            return Row(fault, expected, NOT_RUN, False)
        fake = FakeEmbeddings()
        data = work / "r5-mnt" / "data"
        async with trio.open_nursery() as nursery:
            url = await serve_fake_embeddings(nursery, fake)
            embed = ("--embed-model", fake.model, "--embed-base-url", url)
            async with _server(data, *embed) as client:
                await _call(client, "doc_ingest", text=TEXT, doc_id="q")
                first = await guide_says(client, "caught up")
            asked, vectors = len(fake.requests), (data / "vectors.sqlite3").read_bytes()
            fill_disk(work / "r5-mnt" / "filler")
            async with _server(data, *embed) as client:
                waiting = await guide_says(client, "waiting for room on the disk")
                kept = (data / "vectors.sqlite3").read_bytes() == vectors
                (work / "r5-mnt" / "filler").unlink()
                caught_up = await guide_says(client, "caught up")
            nursery.cancel_scope.cancel()
    again = len(fake.requests) - asked
    return Row(
        fault,
        expected,
        f"embedded first: {first}; said waiting: {waiting}; file kept: {kept} ({len(vectors):,} bytes); "
        f"then caught up: {caught_up}, {again} request(s) again",
        first and kept and caught_up and again == 0,
    )


async def _main(work: Path) -> list[Row]:
    rows: list[Row] = []
    attacks: list[tuple[str, Callable[[], Awaitable[Row | list[Row]]]]] = [
        ("W3 disk full", lambda: disk_full(work)),
        ("full at start", lambda: full_at_start(work)),
        ("prune and import", lambda: prune_and_import(work)),
        ("snapshot", lambda: snapshot_room(work)),
        ("vectors", lambda: vectors_room(work)),
        ("vectors kept", lambda: vectors_kept(work)),
    ]
    for name, attack in attacks:
        rows.extend(await guarded(name, attack, 180))
    return rows


def run(work: Path) -> list[Row]:
    return trio.run(_main, work)
