"""Semantic recall on a full disk: the vectors file never takes the journals' room, and embedding
pauses until there is room instead of stopping for good. On a 4 MB tmpfs, root only (as
tests/store/test_disk_full.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio

from ctxtrio.docs.embedding import SemanticIndex, describe_semantic
from ctxtrio.store import vector_batch
from testkit.disk import fill_disk, free_bytes
from testkit.fake_embeddings import FakeEmbeddings
from tests.store.test_disk_full import small_tmpfs

from .conftest import opened
from .embedder import caught_up, paragraphs, semantic

if TYPE_CHECKING:
    from pathlib import Path


#: The embedder retries and polls quickly (conftest's fixture: real time here).
pytestmark = pytest.mark.usefixtures("quick_retries")


async def test_a_full_disk_pauses_embedding_until_there_is_room(tmp_path: Path) -> None:
    """Vectors to store on a disk filled to the last byte: none is stored, the disk's room stays as it
    was (the write-ahead log does not grow into it), the embedder waits for room (its status says so),
    and once the filler is removed every chunk is embedded, with no restart. Before, the vectors were
    written into the last room ("add failed: database or disk is full") and semantic recall stopped
    until a restart."""
    fake = FakeEmbeddings(down=True)
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        async with opened(mount, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
            doc = await ctx.documents.ingest(text=paragraphs(40), title="parts")
            assert (await ctx.documents.search("topic7 example7")).hits  # (indexed before the disk fills)
            async with semantic(ctx, fake) as index:
                await _state(index, "endpoint unreachable")
                fill_disk(mount / "filler")
                before = free_bytes(mount)
                fake.down = False
                index.wake()
                await _state(index, vector_batch.WAITING_FOR_ROOM)
                assert index.status().chunks_embedded == 0 and free_bytes(mount) >= before
                assert describe_semantic(index.status()).endswith("; waiting for room on the disk")
                (mount / "filler").unlink()
                await caught_up(index)
                assert index.status().chunks_embedded == doc.doc.chunks


async def _state(index: SemanticIndex, state: str) -> None:
    """Wait until the embedder's state is ``state`` (30 s at most)."""
    with trio.fail_after(30):
        while index.status().state != state:
            await trio.sleep(0.05)


async def test_a_start_on_a_full_disk_keeps_the_vectors_and_waits_for_room(tmp_path: Path) -> None:
    """Semantic recall started on a disk filled to the last byte cannot open the vectors file (no room
    for its logs): the file is kept as it was, the embedder waits for room (its status says so), and
    once there is room it goes on from the vectors stored, asking the endpoint for nothing again.
    Before, "disk I/O error" was taken for a damaged file: every vector was deleted, to be embedded
    again (README: 4,201 s of endpoint time for python3.11-doc's 9.9 MB), and recall was off."""
    fake = FakeEmbeddings()
    with small_tmpfs(tmp_path / "mnt", "4m") as mount:
        async with opened(mount, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
            doc = await ctx.documents.ingest(text=paragraphs(40), title="parts")
            async with semantic(ctx, fake) as index:
                await caught_up(index)
            asked = len(fake.requests)
            vectors = ctx.data.vectors_path.read_bytes()
            fill_disk(mount / "filler")
            async with semantic(ctx, fake) as index:
                await _state(index, vector_batch.WAITING_FOR_ROOM)
                assert ctx.data.vectors_path.read_bytes() == vectors
                (mount / "filler").unlink()
                await caught_up(index)
                assert index.status().chunks_embedded == doc.doc.chunks and len(fake.requests) == asked
