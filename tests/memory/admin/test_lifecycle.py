"""Whole-session lifecycle in the library: delete, restore, and what a deleted session refuses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import ctxtrio
from ctxtrio._config import Config
from ctxtrio._errors import InputError, NotFoundError
from ctxtrio.store.reading import read_journal

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from ctxtrio._context import Context


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[Context]:
    async with ctxtrio.open_context(Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as context:
        yield context


async def test_delete_hides_a_session_and_restore_brings_it_back(ctx: Context) -> None:
    """A deleted session leaves the list and refuses reads; restoring it gives back every entry."""
    await ctx.sessions.append("s1", "Decision: keep cookies", pinned=True)
    await ctx.sessions.append("s2", "unrelated")
    before = await ctx.sessions.recall("s1", "cookies")
    deleted = await ctx.sessions.delete_session("s1")
    assert deleted.deleted_at is not None
    assert [info.session_id for info in await ctx.sessions.list_sessions()] == ["s2"]
    listed = await ctx.sessions.list_sessions(include_deleted=True)
    assert {info.session_id: info.deleted_at is not None for info in listed} == {"s1": True, "s2": False}
    with pytest.raises(NotFoundError, match="ctxtrio restore s1"):
        await ctx.sessions.recall("s1", "cookies")
    with pytest.raises(InputError, match="was deleted"):
        await ctx.sessions.append("s1", "more")
    restored = await ctx.sessions.restore_session("s1")
    assert restored.deleted_at is None and restored.live_entries == 1
    assert (await ctx.sessions.recall("s1", "cookies")).text == before.text


async def test_delete_and_restore_are_idempotent(ctx: Context) -> None:
    """Deleting a deleted session, or restoring a live one, writes nothing."""
    await ctx.sessions.append("s1", "one")
    path = ctx.data.session_journal("s1")
    await ctx.sessions.restore_session("s1")
    await ctx.sessions.delete_session("s1")
    await ctx.sessions.delete_session("s1")
    kinds = [(record.kind, record.data.get("deleted")) for record in read_journal(path).records]
    assert kinds == [("session", None), ("entry", None), ("session", True)]


async def test_deleting_an_unknown_session_is_not_found(ctx: Context) -> None:
    """delete_session of a session that never existed raises NotFoundError and creates no file."""
    with pytest.raises(NotFoundError):
        await ctx.sessions.delete_session("nope")
    assert not ctx.data.session_journal("nope").exists()


async def test_export_then_import_elsewhere_keeps_ids_and_answers(ctx: Context, tmp_path: Path) -> None:
    """Records exported and imported into another data dir give the same ids, statuses and recall."""
    await ctx.sessions.append("s1", "Goal: JWT instead of cookies", pinned=True, role="decision")
    for number in range(6):
        await ctx.sessions.append("s1", f"finding {number} about tokens", tags=["finding"])
    await ctx.sessions.compact("s1", keep_recent=2)
    first = (await ctx.sessions.export("s1"))[1]
    await ctx.sessions.update("s1", first.id, delete=True)
    records = await ctx.sessions.records("s1")
    before = await ctx.sessions.recall("s1", "tokens finding")
    other = Config(data_dir=tmp_path / "other", llm_enabled=False, audit=False)
    async with ctxtrio.open_context(other) as second:
        result = await second.sessions.import_session("s1", records)
        assert (result.outcome, result.session_id, result.ids) == ("imported", "s1", "preserved")
        assert await second.sessions.export("s1") == await ctx.sessions.export("s1")
        assert (await second.sessions.recall("s1", "tokens finding")).text == before.text
        again = await second.sessions.import_session("s1", records)
        assert (again.outcome, again.records) == ("unchanged", 0)
        assert len(read_journal(second.data.session_journal("s1")).records) == len(records)


async def test_import_over_other_content_remaps_the_session_id(ctx: Context) -> None:
    """Importing into an id that holds something else stores under id-2 and says the ids were remapped."""
    await ctx.sessions.append("s1", "original content")
    records = await ctx.sessions.records("s1")
    await ctx.sessions.append("s1", "added later")
    result = await ctx.sessions.import_session("s1", records)
    assert (result.outcome, result.session_id, result.ids) == ("imported", "s1-2", "remapped")
    assert [e.text for e in await ctx.sessions.export("s1-2")] == ["original content"]
    assert (await ctx.sessions.import_session("s1", records)).outcome == "unchanged"


async def test_import_of_a_deleted_session_restores_it(ctx: Context) -> None:
    """Export, delete, import: the deleted session is restored, not stored twice."""
    await ctx.sessions.append("s1", "keep me")
    records = await ctx.sessions.records("s1")
    await ctx.sessions.delete_session("s1")
    result = await ctx.sessions.import_session("s1", records)
    assert (result.outcome, result.session_id) == ("restored", "s1")
    assert [e.text for e in await ctx.sessions.export("s1")] == ["keep me"]


async def test_prune_removes_deleted_sessions_and_retired_entries(ctx: Context) -> None:
    """prune(0): deleted sessions go; superseded/deleted entries go; live entries and their ids stay."""
    await ctx.sessions.append("gone", "bye")
    await ctx.sessions.delete_session("gone")
    await ctx.sessions.append("kept", "Goal", pinned=True)
    for number in range(5):
        await ctx.sessions.append("kept", f"note {number}")
    compacted = await ctx.sessions.compact("kept", keep_recent=1)
    assert compacted.summary is not None
    live_before = [e for e in await ctx.sessions.export("kept") if e.status == "live"]
    planned = await ctx.sessions.prune(0, dry_run=True)
    assert {(p.session_id, p.action) for p in planned} == {("gone", "remove session"), ("kept", "remove entries")}
    assert ctx.data.session_journal("gone").exists()
    await ctx.sessions.prune(0)
    assert not ctx.data.session_journal("gone").exists()
    after = await ctx.sessions.export("kept")
    assert [(e.id, e.text) for e in after] == [(e.id, e.text) for e in live_before]
    assert [e.folds for e in after if e.role == "summary"] == [()]
    appended = await ctx.sessions.append("kept", "after the prune")
    assert int(appended.entry.id[1:]) > max(int(e.id[1:]) for e in live_before)
    assert await ctx.sessions.prune(0, dry_run=True) == []


async def test_prune_idle_removes_only_sessions_without_recent_activity(ctx: Context) -> None:
    """Without idle, an untouched live session stays; with idle and a cutoff before its activity, too."""
    await ctx.sessions.append("quiet", "still needed")
    assert await ctx.sessions.prune(0) == []
    assert await ctx.sessions.prune(3600, idle=True) == []
    removed = await ctx.sessions.prune(0, idle=True)
    assert [(p.session_id, p.action) for p in removed] == [("quiet", "remove session")]
    assert await ctx.sessions.list_sessions(include_deleted=True) == []


async def test_a_second_instance_sees_a_prune_and_appends_after_it(ctx: Context, tmp_path: Path) -> None:
    """Another instance on the data dir (its own writer) reloads the pruned journal and appends to the new file."""
    other = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with ctxtrio.open_context(other) as second:
        for number in range(4):
            await second.sessions.append("s", f"note {number}")
        await second.sessions.compact("s", keep_recent=1)
        assert (await second.sessions.status("s")).superseded == 3
        await ctx.sessions.prune(0)
        assert (await second.sessions.status("s")).superseded == 0
        appended = await second.sessions.append("s", "after")
        texts = [e.text for e in await ctx.sessions.export("s")]
        assert texts[-1] == "after" and appended.entry.text == "after"
        assert [r.kind for r in read_journal(ctx.data.session_journal("s")).records][-2:] == ["prune", "entry"]
