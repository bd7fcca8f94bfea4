"""Another process holding the vectors file's lock (a second server on the data dir, ``ctxtrio doctor``)
pauses the embedder; it does not stop semantic recall until a restart, as a damaged file does."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio

from ctxtrio.store import vector_batch, vector_schema
from testkit.fake_embeddings import FakeEmbeddings
from testkit.sqlite_lock import write_lock_held

from .conftest import opened
from .embedder import BISECT, OTHER, caught_up, semantic

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.usefixtures("quick_retries")


async def test_a_lock_held_by_another_process_pauses_the_embedder_and_it_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write lock held past the busy timeout: the embedder says it waits, then embeds the new
    document once the lock is gone; searches meanwhile answer from BM25."""
    monkeypatch.setattr(vector_schema, "BUSY_TIMEOUT_S", 0.1)
    fake = FakeEmbeddings()
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=OTHER, title="shutil")
        async with semantic(ctx, fake) as index:
            await caught_up(index)
            with write_lock_held(ctx.data.vectors_path):  # what a second server's write holds
                await ctx.documents.ingest(text=BISECT, title="bisect")
                index.wake()
                with trio.fail_after(30):
                    while index.status().state != vector_batch.WAITING_FOR_LOCK:
                        await trio.sleep(0.02)
                found = await ctx.documents.search("values inserted sorted", limit=1)
                assert found.hits
            await caught_up(index)
            status = index.status()
    assert status.state == "caught up" and status.chunks_embedded == status.chunks_total == 2
