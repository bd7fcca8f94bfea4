"""Bounded session state: unknown ids cost nothing, idle sessions are evicted, listing pages
from summary files instead of replaying every session (issue 11 rows H4 and H5, scaled down)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
import trio

import ctxtrio
from ctxtrio._errors import NotFoundError
from ctxtrio.memory.service import SessionService
from ctxtrio.memory.sessions.summary import read_summary, summary_path, write_summary
from ctxtrio.store.records import NewRecord

from ..test_service import config, ctx  # noqa: F401  (ctx is a fixture)

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._wiring import Wiring


async def fill(ctx: Wiring, sessions: int, entries: int) -> list[str]:
    """``sessions`` sessions of ``entries`` entries, written straight to their journals, oldest first."""
    ids = [f"s{n:03d}" for n in range(sessions)]
    for session_id in ids:
        records = [NewRecord("session", {"title": f"title {session_id}"}, id=session_id)]
        records += [
            NewRecord("entry", {"text": f"{session_id} fact {n}", "role": "note"}, id_prefix="e")
            for n in range(entries)
        ]
        await ctx.store.append(ctx.data.session_journal(session_id), records)
        await trio.sleep(
            0.011
        )  # distinct modification times (kernel timestamps are coarse): the listing is latest first
    return ids


async def test_unknown_ids_are_not_kept(ctx: Wiring) -> None:
    """H5: calls on made-up ids fail clearly and leave nothing in memory or on disk."""
    service = ctx.sessions
    for n in range(300):
        with pytest.raises(NotFoundError) as caught:
            await service.status(f"made-up-{n}")
        assert caught.value.hint == "list_sessions"
        with pytest.raises(NotFoundError):
            await service.recall(f"made-up-{n}", "anything")
    assert len(service._registry) == 0
    assert list(ctx.data.sessions.iterdir()) == []


async def test_idle_sessions_are_evicted_and_come_back(ctx: Wiring) -> None:
    """At most max_sessions idle sessions stay loaded; an evicted one replays the same state."""
    service = SessionService(ctx.store, ctx.live, max_sessions=3)
    for n in range(10):
        await service.append(f"s{n}", f"note {n} about cookies")
        assert len(service._registry) <= 3
    assert "s0" not in service._registry
    recalled = await service.recall("s0", "cookies")
    assert [entry.text for entry in recalled.entries] == ["note 0 about cookies"]
    assert len(service._registry) <= 3


async def test_entry_bound_evicts_large_sessions(ctx: Wiring) -> None:
    """Idle sessions holding more than max_entries entries in all are evicted, oldest use first."""
    await fill(ctx, 4, 30)
    service = SessionService(ctx.store, ctx.live, max_entries=70)
    for session_id in ("s000", "s001", "s002", "s003"):
        await service.recall(session_id, "fact")
        assert service._registry.entries() <= 70
    assert "s003" in service._registry and "s000" not in service._registry


async def test_listing_pages_latest_first_within_the_budget(ctx: Wiring) -> None:
    """H4: pages cover every session once, newest first, each within the budget; none stays loaded."""
    ids = await fill(ctx, 40, 5)
    service = ctx.sessions
    seen: list[str] = []
    offset: int | None = 0
    pages = 0
    while offset is not None:
        page = await service.page_sessions(offset=offset, budget_tokens=200)
        assert ctx.live.tokens.current.estimate(page.text) <= 200
        assert page.total == 40 and page.sessions
        seen.extend(info.session_id for info in page.sessions)
        if page.next_offset is not None:
            assert f"offset={page.next_offset}" in page.text
        offset = page.next_offset
        pages += 1
    assert seen == list(reversed(ids)) and pages > 2
    assert len(service._registry) == 0
    assert all(read_summary(ctx.data.session_journal(s), s) is not None for s in ids)


async def test_listing_reads_fresh_summaries_without_the_journal(ctx: Wiring) -> None:
    """A fresh summary is what the list shows: the journal is not replayed for it."""
    await fill(ctx, 1, 3)
    path = ctx.data.session_journal("s000")
    await ctx.sessions.list_sessions()
    summary = read_summary(path, "s000")
    assert summary is not None
    write_summary(path, replace(summary, live=99))  # well-formed and checksummed, but not what the journal says
    assert [info.live_entries for info in await ctx.sessions.list_sessions()] == [99]
    doctored = summary_path(path).read_text().replace('"live": 99', '"live": 98')
    summary_path(path).write_text(doctored)  # changed without its checksum: rebuilt from the journal
    assert [info.live_entries for info in await ctx.sessions.list_sessions()] == [3]


async def test_stale_or_corrupt_summaries_are_rebuilt(tmp_path: Path) -> None:
    """A summary behind the journal (another process appended) or damaged is ignored and rewritten."""
    async with ctxtrio.open_context(config(tmp_path)) as a, ctxtrio.open_context(config(tmp_path)) as b:
        await a.sessions.append("shared", "one")
        assert [i.live_entries for i in await b.sessions.list_sessions()] == [1]
        await a.sessions.append("shared", "two")
        assert [i.live_entries for i in await b.sessions.list_sessions()] == [2]
        summary_path(a.data.session_journal("shared")).write_bytes(b"\x00garbage{")
        assert [i.live_entries for i in await b.sessions.list_sessions()] == [2]
        assert (await b.sessions.status("shared")).live_entries == 2
        assert read_summary(a.data.session_journal("shared"), "shared") is not None


async def test_status_from_a_summary_equals_the_loaded_status(tmp_path: Path) -> None:
    """Status of a session not in memory (a fresh summary) matches status after loading it."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        for n in range(6):
            await ctx.sessions.append("s1", f"fact {n}", pinned=n == 0)
        await ctx.sessions.update("s1", "e3", delete=True)
        loaded = await ctx.sessions.status("s1")
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        from_summary = await ctx.sessions.status("s1")
        assert "s1" not in ctx.sessions._registry
        assert from_summary == loaded


async def test_derived_files_of_a_removed_journal_are_removed(ctx: Wiring) -> None:
    """A summary or snapshot left by a session whose journal is gone is cleaned up by the next listing."""
    await ctx.sessions.append("gone", "x")
    await ctx.sessions.append("kept", "y")
    await ctx.sessions.list_sessions()
    journal = ctx.data.session_journal("gone")
    (journal.with_name("gone.snapshot")).write_bytes(b"stale")
    assert summary_path(journal).exists()
    journal.unlink()
    assert [info.session_id for info in await ctx.sessions.list_sessions()] == ["kept"]
    assert not summary_path(journal).exists() and not journal.with_name("gone.snapshot").exists()
    assert summary_path(ctx.data.session_journal("kept")).exists()


async def test_an_evicted_session_leaves_its_summary(ctx: Wiring) -> None:
    """A session evicted before any read wrote its summary gets it written, so listing does not replay it."""
    service = SessionService(ctx.store, ctx.live, max_sessions=1)
    await service.append("first", "only appended, never read")
    journal = ctx.data.session_journal("first")
    assert read_summary(journal, "first") is None
    await service.append("second", "evicts the first")
    assert "first" not in service._registry
    assert [info.session_id for info in await service.list_sessions()] == ["second", "first"]
    summary = read_summary(journal, "first")
    assert summary is not None and summary.model != "" and summary.live == 1  # a full summary, not a light replay


async def test_a_page_past_the_end_says_so(ctx: Wiring) -> None:
    """An offset at or past the last session names the offsets there are (it said '(sessions 6-5 of 2; no
    more)', and for a model's offset=10**20 '(sessions 100000000000000000001-100000000000000000000 of 2...')."""
    await fill(ctx, 2, 1)
    for offset in (2, 5, 10**20):
        page = await ctx.sessions.page_sessions(offset=offset)
        assert page.sessions == () and page.next_offset is None
        assert page.text == f"(2 sessions; offset={offset} is past the end: use offset=0 to 1)\n", page.text
    last = await ctx.sessions.page_sessions(offset=1)
    assert last.text.endswith("(sessions 2-2 of 2; no more)\n"), last.text
