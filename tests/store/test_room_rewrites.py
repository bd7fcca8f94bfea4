"""Whole-journal writes on a full disk (store/journal.rewrite, store/install): a prune or an import
that finds no room leaves nothing behind and takes the derived index's room, as an append does
(store/room.py). On a 4 MB tmpfs, root only (as tests/store/test_disk_full.py)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from ctxtrio._errors import StoreError
from ctxtrio.store.journal import JournalAppender
from ctxtrio.store.records import NewRecord
from testkit.disk import fill_disk, free_bytes
from tests.docs.conftest import opened
from tests.store.test_disk_full import small_tmpfs
from tests.store.test_room import TEXT

if TYPE_CHECKING:
    from pathlib import Path


def test_a_rewrite_without_room_leaves_the_journal_and_the_room_as_they_were(tmp_path: Path) -> None:
    """A rewrite (prune, the catalog's stale cursors) that finds no room for its new file fails
    saying so, and the journal and the disk's free room are as before it. Before, the temporary
    file cut short by the full disk stayed (.s.jsonl.rewrite-PID, never removed by another process),
    holding the room the next appends needed."""
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        journal = mount / "s.jsonl"
        appender = JournalAppender(lock_timeout_s=5.0)
        try:
            appender.append(journal, [NewRecord("entry", {"text": "x" * 1000, "n": n}) for n in range(1000)])
            content = journal.read_bytes()
            fill_disk(mount / "filler", leave_bytes=200_000)
            before = free_bytes(mount)
            with pytest.raises(StoreError, match="No space left on device"):
                appender.rewrite(journal, lambda records: [r for r in records if r.get("n") in range(0, 1000, 2)])
            assert journal.read_bytes() == content
            assert sorted(path.name for path in mount.iterdir()) == ["filler", "s.jsonl"]
            assert free_bytes(mount) >= before
        finally:
            appender.close()


async def test_a_prune_on_a_full_disk_takes_the_room_of_the_index(tmp_path: Path) -> None:
    """prune on a disk filled to the last byte rewrites the session's journal in the derived index's
    room (set aside, rebuilt once there is room): every live entry stays, the retired ones go, and
    search comes back once the filler is removed. Before, prune failed with "No space left on
    device", though the index held room the journals come before."""
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        async with opened(mount) as ctx:
            await ctx.documents.ingest(text=TEXT, title="q")
            for number in range(40):
                await ctx.sessions.append("s", f"note {number} " + "y" * 1000)
            assert (await ctx.sessions.compact("s", keep_recent=5)).summary is not None
            live = [(e.id, e.text) for e in await ctx.sessions.export("s") if e.status == "live"]
            journal = mount / "data" / "sessions" / "s.jsonl"
            size = journal.stat().st_size
            assert (await ctx.documents.search("quokka", budget_tokens=4000)).hits  # (indexed before the disk fills)
            fill_disk(mount / "filler")
            assert [plan.session_id for plan in await ctx.sessions.prune(0)] == ["s"]
            assert journal.stat().st_size < size and ctx.store.health.shelved
            assert [(e.id, e.text) for e in await ctx.sessions.export("s")] == live
            (mount / "filler").unlink()
            assert (await ctx.documents.search("quokka", budget_tokens=4000)).hits


async def test_an_import_on_a_full_disk_takes_the_room_of_the_index(tmp_path: Path) -> None:
    """An import on a disk filled to the last byte is written whole in the derived index's room.
    Before, it failed with "No space left on device" though the index held room."""
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        async with opened(mount) as ctx:
            await ctx.documents.ingest(text=TEXT, title="q")
            for number in range(20):
                await ctx.sessions.append("s", f"note {number} " + "z" * 1000)
            records = await ctx.sessions.records("s")
            assert (await ctx.documents.search("quokka", budget_tokens=4000)).hits  # (indexed before the disk fills)
            fill_disk(mount / "filler")
            imported = await ctx.sessions.import_session("copy", records)
            assert (imported.outcome, imported.session_id) == ("imported", "copy")
            assert [e.text for e in await ctx.sessions.export("copy")] == [
                e.text for e in await ctx.sessions.export("s")
            ]
            assert ctx.store.health.shelved and os.path.getsize(mount / "data" / "sessions" / "copy.jsonl") > 20_000
            (mount / "filler").unlink()
            assert (await ctx.documents.search("quokka", budget_tokens=4000)).hits
