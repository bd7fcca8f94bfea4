"""Whole-session lifecycle in the library: delete, restore, and what a deleted session refuses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import ctxtrio
from ctxtrio._config import Config
from ctxtrio._context import Context
from ctxtrio._errors import InputError, NotFoundError
from ctxtrio.store.journal import read_journal


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
