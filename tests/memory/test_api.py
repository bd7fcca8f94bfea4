"""The public surface of ctxtrio.memory, pinned for mypy with assert_type (and run once)."""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_type

import ctxtrio
import ctxtrio.memory as memory
from testkit.deadlines import until

if TYPE_CHECKING:
    from pathlib import Path


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted and names exactly the re-exported objects."""
    assert memory.__all__ == sorted(memory.__all__)
    assert all(hasattr(memory, name) for name in memory.__all__)


async def test_public_signatures(tmp_path: Path) -> None:
    """Every SessionService method returns its frozen result type."""
    config = ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with ctxtrio.open_context(config) as ctx:
        sessions = ctx.sessions
        assert_type(sessions, memory.SessionService)
        opened = await sessions.open("s1", "title")
        assert_type(opened, memory.OpenResult)
        assert_type(opened.status, memory.SessionStatus)
        appended = await sessions.append("s1", "text", role="decision", tags=["a"], pinned=True)
        assert_type(appended, memory.Appended)
        assert_type(appended.entry, memory.Entry)
        assert_type(appended.entry.role, memory.Role)
        assert_type(appended.entry.status, memory.EntryStatus)
        recalled = await sessions.recall("s1", "text", budget_tokens=500, limit=5, tags=["a"])
        assert_type(recalled, memory.RecallResult)
        assert_type(recalled.entries, tuple[memory.Entry, ...])
        assert_type(recalled.text, str)
        status = await sessions.status("s1")
        assert_type(status, memory.SessionStatus)
        assert_type(status.advice, memory.Advice)
        compacted = await sessions.compact("s1", keep_recent=0, target_tokens=50, dry_run=True, wait=until(1e9))
        assert_type(compacted, memory.CompactResult)
        updated = await sessions.update("s1", appended.entry.id, pinned=False)
        assert_type(updated, memory.UpdateResult)
        assert_type(await sessions.list_sessions(), list[memory.SessionInfo])
        assert_type(await sessions.export("s1"), list[memory.Entry])
        assert not updated.entry.pinned and status.pinned == 1
