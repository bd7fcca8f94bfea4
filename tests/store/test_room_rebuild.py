"""A shelved search index is rebuilt only when the room it takes is there (store/room.py): with just
what :func:`~ctxtrio.store.room.rebuild_needs_bytes` asks for, the rebuild fits. On a 32 MB tmpfs,
root only (as tests/store/test_disk_full.py), over Debian's python3.11-doc (skipped without it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxtrio.store.room import rebuild_needs_bytes, room_to_rebuild
from testkit.disk import fill_disk
from tests.docs.conftest import PY_SOURCES, opened
from tests.store.test_disk_full import small_tmpfs

if TYPE_CHECKING:
    from pathlib import Path

#: Above the asked room by a little, as fill_disk stops within a page of what it is told to leave.
MARGIN_BYTES = 64 * 1024


async def test_with_the_room_the_check_asks_for_a_rebuild_fits(tmp_path: Path) -> None:
    """60 python3.11-doc pages (0.78 MB of journals), the index shelved by a session append on a full disk,
    then the disk filled again to leave what rebuild_needs_bytes asks: the next search rebuilds the index and
    finds the page, and the index stays. Before, the check asked twice the journals' bytes and 1 MB (2.6 MB),
    and the rebuild took 5.5 MB at its peak (the index and its write-ahead log): it was shelved again, and
    the search said the index was set aside."""
    if not PY_SOURCES.is_dir():
        pytest.skip(f"{PY_SOURCES} not found: apt-get install python3.11-doc")
    with small_tmpfs(tmp_path / "mnt", "32m") as mount:
        async with opened(mount) as ctx:
            for path in sorted(PY_SOURCES.rglob("*.txt"))[:60]:
                await ctx.documents.ingest(text=path.read_text(encoding="utf-8"), title=path.name)
            fill_disk(mount / "filler")
            await ctx.sessions.append("s", "an entry written on a full disk " * 400)  # takes the index's room
            assert ctx.store.health.shelved
            (mount / "filler").unlink()
            fill_disk(mount / "filler", leave_bytes=rebuild_needs_bytes(ctx.data) + MARGIN_BYTES)
            assert room_to_rebuild(ctx.data)
            found = await ctx.documents.search("abstract objects layer", budget_tokens=1000)
            assert found.hits
            assert (ctx.store.health.shelved, ctx.store.health.heals) == (False, 1)
