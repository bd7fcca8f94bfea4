"""SessionService through the library, replayed: after a restart, and by two instances on one data dir."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ctxtrio

from .test_service import config

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._context import Context
    from ctxtrio.memory import Entry, RecallResult, SessionStatus


async def snapshot(ctx: Context) -> tuple[list[Entry], SessionStatus, RecallResult]:
    sessions = ctx.sessions
    return await sessions.export("s1"), await sessions.status("s1"), await sessions.recall("s1", "fact value")


async def test_state_after_restart_equals_state_before(tmp_path: Path) -> None:
    """Everything (entries, pins, deletes, compaction) replays to the same state."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        for n in range(8):
            await ctx.sessions.append("s1", f"fact {n}: value {n * n}", tags=["x"] if n % 2 else None)
        await ctx.sessions.update("s1", "e3", pinned=True)
        await ctx.sessions.update("s1", "e4", delete=True)
        await ctx.sessions.compact("s1", keep_recent=2)
        before = await snapshot(ctx)
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        after = await snapshot(ctx)
    assert after == before


async def test_two_instances_see_each_other(tmp_path: Path) -> None:
    """Two contexts on one data dir (like two processes) see each other's writes on their next call."""
    async with ctxtrio.open_context(config(tmp_path)) as a, ctxtrio.open_context(config(tmp_path)) as b:
        first = await a.sessions.append("shared", "written by A about cookies")
        found = await b.sessions.recall("shared", "cookies")
        assert [e.id for e in found.entries] == [first.entry.id]
        second = await b.sessions.append("shared", "written by B about sessions")
        assert second.entry.id != first.entry.id
        await b.sessions.update("shared", first.entry.id, pinned=True)
        status = await a.sessions.status("shared")
        assert (status.live_entries, status.pinned) == (2, 1)
        again = await a.sessions.append("shared", "written by B about sessions")
        assert again.duplicate and again.entry.id == second.entry.id
        third = await a.sessions.append("shared", "A again")
        assert third.status.live_entries == 3
        assert (await b.sessions.status("shared")).live_entries == 3
