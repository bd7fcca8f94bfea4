"""A session's snapshot never takes the journals' room on a nearly full disk (memory/state/snapshot.py).
On a 4 MB tmpfs, root only (as tests/store/test_disk_full.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from testkit.disk import fill_disk
from tests.docs.conftest import opened
from tests.store.test_disk_full import small_tmpfs

if TYPE_CHECKING:
    from pathlib import Path


async def test_a_snapshot_that_would_take_the_journals_room_is_not_written(tmp_path: Path) -> None:
    """A 560 KB session loaded on a disk with 900 KB free: its snapshot (about its journal's size) is
    not written, since it would leave less than 1 MiB free, and 700 KB of notes appended after it are
    all stored; once the disk has room, the next read writes it. Before, the snapshot took 560 KB of
    the room and the notes failed with "No space left on device" before 700 KB."""
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        async with opened(mount) as ctx:
            for number in range(500):
                await ctx.sessions.append("s", f"note {number} " + "w" * 1000)
        snapshot = mount / "data" / "sessions" / "s.snapshot"
        assert not snapshot.exists()  # (appends alone write none: the load below would)
        fill_disk(mount / "filler", leave_bytes=900_000)
        async with opened(mount) as ctx:
            assert (await ctx.sessions.recall("s", "note 7")).entries
            assert not snapshot.exists()
            for number in range(70):
                await ctx.sessions.append("s", f"late {number} " + "v" * 10_000)
            assert len(await ctx.sessions.export("s")) == 570
            (mount / "filler").unlink()
            assert (await ctx.sessions.recall("s", "late 69")).entries
            assert snapshot.exists()
