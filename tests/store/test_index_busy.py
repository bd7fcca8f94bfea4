"""A server that opens the search index while another process holds its write lock searches again once it lets go."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import ctxtrio
from ctxtrio._errors import StoreError
from ctxtrio.store import index
from testkit.sqlite_lock import write_lock_held

if TYPE_CHECKING:
    from pathlib import Path


async def test_search_comes_back_once_the_lock_is_let_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another connection holds the index's write lock past the writer's wait when the store opens (two
    servers starting at once, a doctor --repair rebuilding): searches and an ingest meanwhile fail saying
    so; once the lock is let go, the next search opens the index again and finds the document there
    before and the one ingested meanwhile, with no restart (before: off until a restart)."""
    monkeypatch.setattr(index, "WRITE_BUSY_S", 0.2)  # the wait for the lock, not what is tested
    config = ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with ctxtrio.open_context(config) as ctx:
        await ctx.documents.ingest(text="# Echidna\n\nThe echidna lays eggs.\n", title="echidna")
    with write_lock_held(tmp_path / "data" / "index.sqlite3") as other:
        async with ctxtrio.open_context(config) as ctx:
            with pytest.raises(StoreError, match="database is locked"):
                await ctx.documents.search("echidna")
            await ctx.documents.ingest(text="# Quoll\n\nThe quoll hunts at night.\n", title="quoll")
            with pytest.raises(StoreError, match="database is locked"):
                await ctx.documents.search("quoll")
            other.execute("ROLLBACK")
            echidna = await ctx.documents.search("echidna")
            quoll = await ctx.documents.search("quoll")
    assert [hit.title for hit in echidna.hits] == ["echidna"]
    assert [hit.title for hit in quoll.hits] == ["quoll"]
