"""Session faults: listing many sessions, made-up ids, damaged or stale derived files.

Rows (issue 11 H4 and H5 scaled down, plus the derived files sessions keep beside
their journals: ``<id>.summary.json`` and ``<id>.snapshot``):

* many sessions listed over HTTP: one page within the budget, paging covers all;
* made-up ids through the tool layer: memory flat, nothing kept;
* a snapshot damaged (bit flip, cut short), stale (journal replaced), or a summary
  garbled or lying about an older journal: answers equal a replay of the journal.
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
from pathlib import Path

import trio

STRESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(STRESS))
sys.path.insert(0, str(STRESS.parent))

from typing import TYPE_CHECKING  # noqa: E402

from mcp import Client  # noqa: E402
from session_limits import _list_pages, rss_mb_self, write_sessions  # noqa: E402

from attacks import Row  # noqa: E402
from ctxtrio._app import build_server, open_context  # noqa: E402
from ctxtrio._config import Config  # noqa: E402
from ctxtrio._wiring import open_wiring  # noqa: E402
from ctxtrio.memory.sessions.summary import summary_path  # noqa: E402
from ctxtrio.memory.state.snapshot import snapshot_path  # noqa: E402
from ctxtrio.store.records import NewRecord  # noqa: E402

if TYPE_CHECKING:
    from ctxtrio._context import Context

BUDGET_TOKENS = 4000


def _config(data_dir: Path) -> Config:
    return Config(data_dir=data_dir, llm_enabled=False, audit=False)


async def _listing(work: Path) -> Row:
    data_dir = work / "listing"
    sessions = 300
    await write_sessions(data_dir, sessions, 50)
    first_ms, before, after, pages, seen, largest = await _list_pages(data_dir, walk=True)
    held = seen == sessions and largest <= BUDGET_TOKENS and pages > 1 and after - before <= 100
    return Row(
        f"H4 context_list_sessions over {sessions} sessions x 50 entries (HTTP, no summaries yet)",
        "paged within the budget, every session once, no session kept in memory",
        f"{pages} pages, {seen} sessions, largest page {largest} tokens, first {first_ms:.0f} ms, "
        f"RSS +{after - before:.1f} MB",
        held,
    )


async def _unknown_ids(work: Path, calls: int = 10_000) -> Row:
    async with open_wiring(_config(work / "unknown")) as ctx, Client(build_server(ctx)) as client:
        await client.call_tool("context_append", {"session_id": "real", "text": "one real entry"})
        for number in range(500):  # warm up allocators and caches
            await client.call_tool("context_status", {"session_id": f"warm-{number}"})
        gc.collect()
        before = rss_mb_self()
        errors = 0
        for number in range(calls):
            result = await client.call_tool("context_status", {"session_id": f"made-up-{number}"})
            errors += bool(result.is_error)
        gc.collect()
        after = rss_mb_self()
        held_sessions = len(ctx.sessions._registry)
    return Row(
        f"H5 {calls} context_status calls on made-up session ids (tool layer)",
        "each a clear error; memory flat (<= 10 MB); no session kept",
        f"{errors} errors, RSS {before:.1f} -> {after:.1f} MB, {held_sessions} sessions held",
        errors == calls and after - before <= 10 and held_sessions <= 1,
    )


async def _answers(ctx: Context) -> tuple[object, ...]:
    status = await ctx.sessions.status("s1")
    recalled = await ctx.sessions.recall("s1", "cookie value")
    return (
        await ctx.sessions.export("s1"),
        status.live_entries,
        status.live_tokens,
        [entry.id for entry in recalled.entries],
    )


async def _filled(data_dir: Path) -> tuple[object, ...]:
    """A session past the snapshot threshold (64 KB): pins, a delete and a compaction on top."""
    async with open_wiring(_config(data_dir)) as ctx:
        await ctx.sessions.open("s1", "attack")
        records = [
            NewRecord(
                "entry", {"text": f"fact {n}: cookie value {n * 7} " + "word " * 20, "role": "note"}, id_prefix="e"
            )
            for n in range(800)
        ]
        await ctx.store.append(ctx.data.session_journal("s1"), records)
        await ctx.sessions.update("s1", "e5", pinned=True)
        await ctx.sessions.update("s1", "e9", delete=True)
        await ctx.sessions.compact("s1", keep_recent=5)
        return await _answers(ctx.context)


async def _damaged_snapshot(work: Path, damage: str) -> Row:
    data_dir = work / f"snapshot-{damage}"
    expected = await _filled(data_dir)
    journal = data_dir / "sessions" / "s1.jsonl"
    snapshot = snapshot_path(journal)
    if damage == "stale":
        shutil.copy(journal, journal.with_suffix(".copy"))
        os.replace(journal.with_suffix(".copy"), journal)  # same content, another inode
        fault = "journal replaced (new inode) under an existing snapshot"
    else:
        data = bytearray(snapshot.read_bytes())
        if damage == "flip":
            data[len(data) // 2] ^= 0x40
            fault = "snapshot with one bit flipped mid-file"
        else:
            del data[len(data) // 3 :]
            fault = "snapshot cut to a third"
        snapshot.write_bytes(bytes(data))
    damaged = snapshot.read_bytes() if snapshot.exists() else b"(none)"
    async with open_context(_config(data_dir)) as ctx:
        got = await _answers(ctx)
    rebuilt = snapshot.read_bytes() != damaged
    return Row(
        fault,
        "ignored, rebuilt from the journal; answers unchanged",
        f"answers {'equal' if got == expected else 'DIFFER'}, snapshot {'rebuilt' if rebuilt else 'kept'}",
        got == expected and rebuilt,
    )


async def _summary_fault(work: Path, kind: str) -> Row:
    data_dir = work / f"summary-{kind}"
    await _filled(data_dir)
    journal = data_dir / "sessions" / "s1.jsonl"
    async with open_context(_config(data_dir)) as ctx:
        truth = [(i.session_id, i.live_entries) for i in await ctx.sessions.list_sessions()]
        status = await ctx.sessions.status("s1")
    path = summary_path(journal)
    if kind == "garbled":
        path.write_bytes(b'{"v": 2, "session_id": "s1", "live": "many"')
        fault = "summary file garbled (cut JSON)"
    else:
        with open(journal, "ab") as handle:  # another process appended; the summary is now behind
            handle.write(b'{"v":1,"seq":999,"ts":1.0,"kind":"entry","id":"e999","text":"late","role":"note"}\n')
        truth = [(session_id, live + 1) for session_id, live in truth]
        fault = "summary behind the journal (another process appended)"
    async with open_context(_config(data_dir)) as ctx:
        listed = [(i.session_id, i.live_entries) for i in await ctx.sessions.list_sessions()]
        now = await ctx.sessions.status("s1")
    expected_live = status.live_entries + (kind == "behind")
    return Row(
        fault,
        "ignored: list and status follow the journal",
        f"list {listed} (journal says {truth}), status live {now.live_entries}",
        listed == truth and now.live_entries == expected_live,
    )


async def _all(work: Path) -> list[Row]:
    rows = [await _listing(work), await _unknown_ids(work)]
    for damage in ("flip", "cut", "stale"):
        rows.append(await _damaged_snapshot(work, damage))
    for kind in ("garbled", "behind"):
        rows.append(await _summary_fault(work, kind))
    return rows


def run(work: Path) -> list[Row]:
    return trio.run(_all, work)
