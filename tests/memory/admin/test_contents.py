"""A session's contents and the journals' check: what ``ctxtrio show`` and ``ctxtrio doctor`` ask the service."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import ctxtrio
from ctxtrio._errors import NotFoundError
from ctxtrio.memory.admin.prune import replay_records

from .test_lifecycle import ctx  # noqa: F401  (ctx is a fixture)

if TYPE_CHECKING:
    from ctxtrio._context import Context


async def test_contents_holds_every_entry_of_a_deleted_session(ctx: Context) -> None:
    """A deleted session's contents: its list line says deleted, every entry is there with its status, as a replay gives."""
    await ctx.sessions.append("s1", "Decision: keep cookies", pinned=True)
    for n in range(5):
        await ctx.sessions.append("s1", f"note {n}: tried option {n}")
    await ctx.sessions.update("s1", "e2", delete=True)
    await ctx.sessions.compact("s1", keep_recent=1)
    await ctx.sessions.delete_session("s1")
    contents = await ctx.sessions.contents("s1")
    state = replay_records("s1", await ctx.sessions.records("s1"))
    assert contents.info.session_id == "s1" and contents.info.deleted_at == state.deleted_at is not None
    assert contents.entries == tuple(item.snapshot() for item in state.order)
    statuses = [entry.status for entry in contents.entries]
    assert statuses.count("deleted") == state.deleted == 1
    assert statuses.count("superseded") == state.superseded >= 1
    assert statuses.count("live") == contents.info.live_entries == state.live_count
    with pytest.raises(NotFoundError):
        await ctx.sessions.contents("nope")


async def test_check_journals_counts_sessions_records_and_damage(ctx: Context) -> None:
    """check_journals counts sessions (deleted ones too), records, torn last lines and malformed lines."""
    await ctx.sessions.append("s1", "one")
    await ctx.sessions.append("s1", "two")
    await ctx.sessions.append("s2", "three")
    await ctx.sessions.delete_session("s2")
    assert await ctx.sessions.check_journals() == ctxtrio.JournalCheck(
        sessions=2, deleted=1, records=6, torn=0, malformed=0
    )
    with ctx.data.session_journal("s1").open("ab") as journal:
        journal.write(b"not a record\n")
    with ctx.data.session_journal("s2").open("ab") as journal:
        journal.write(b'{"v": 1, "kind": "entry"')  # a write cut short: no newline
    assert await ctx.sessions.check_journals() == ctxtrio.JournalCheck(
        sessions=2, deleted=1, records=6, torn=1, malformed=1
    )
