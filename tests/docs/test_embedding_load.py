"""A search after a start does not wait for the vectors to be read into memory.

Search by meaning scans one matrix of every vector in memory (``store/vector_matrix.py``); after a
start it is not there, and reading it is seconds (5.2 s at 600,000 rows, ``stress/start_vectors.py``).
Until this change the first search read it itself, in a thread its QUERY_S deadline cannot
abandon, holding the store's lock. Now the embedder reads it in the background once the file is
open (``VectorTask._keep_loaded``), and a search meanwhile answers by keyword and says why.

The read is held here on a :class:`threading.Event` by a :class:`HeldRead`, the real
:class:`~ctxtrio.store.vectors.VectorStore` whose read of the matrix first waits for the test (then
reads as always), put where ``_wiring.py`` makes its vectors stores. No clock decides anything: the
guard's 60 s only turns a search that waits for the read (the old behaviour) into a failure
instead of a hang.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar

import pytest
import trio

from ctxtrio import _wiring
from ctxtrio._app import open_context
from ctxtrio.store import vector_task
from ctxtrio.store.vectors import VectorStore
from testkit.fake_embeddings import FakeEmbeddings, quick_embedders, serve_fake_embeddings, served_config

from .embedder import BISECT, OTHER, QUERY, SYNONYMS, caught_up

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

    from ctxtrio.store.vector_matrix import Matrix

#: Longest a held read waits for the test: past it, a search waited for the read (see the module docstring).
GUARD_S = 60.0


class HeldRead(VectorStore):
    """The real vectors store, whose read of a matrix not in memory waits until ``release`` is set."""

    release: ClassVar[threading.Event]
    #: Set when a read of the matrix began (and waits for ``release``).
    reading: ClassVar[threading.Event]

    def _read(self, conn: sqlite3.Connection, model: str, dim: int) -> Matrix:
        HeldRead.reading.set()
        if not HeldRead.release.wait(GUARD_S):
            raise AssertionError("a search waited for the vectors' read into memory")
        return super()._read(conn, model, dim)


@pytest.fixture(autouse=True)
def held_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # QUERY_S: a query's vector over loopback HTTP on a loaded machine (what is asked here is wiring, not latency).
    quick_embedders(monkeypatch, poll_s=0.5, retry_max_s=0.2, query_s=10.0)
    HeldRead.release, HeldRead.reading = threading.Event(), threading.Event()
    monkeypatch.setattr(_wiring, "VectorStore", HeldRead)


async def test_a_search_after_a_start_answers_by_keyword_while_the_vectors_load(tmp_path: Path) -> None:
    """A server restarted over embedded documents reads their vectors in the background (no search asked):
    a search meanwhile is answered by keyword, saying the vectors are still loading; once read, the same
    search finds the paraphrase by meaning, as before the restart."""
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        config = served_config(tmp_path / "data", fake, url)
        try:
            HeldRead.release.set()  # the first run embeds freely
            async with open_context(config) as ctx:
                index = ctx.documents.semantic
                assert index is not None
                await ctx.documents.ingest(text=OTHER, title="shutil")
                await ctx.documents.ingest(text=BISECT, title="bisect")
                await caught_up(index)
                assert index.status().memory_bytes > 0  # read once every chunk was embedded, before any search
                before = await ctx.documents.search(QUERY)
                assert before.semantic_skipped is None and before.hits[0].by_meaning
            HeldRead.release.clear()
            HeldRead.reading.clear()
            async with open_context(config) as ctx:
                index = ctx.documents.semantic
                assert index is not None
                read_began = await trio.to_thread.run_sync(HeldRead.reading.wait, GUARD_S)
                assert read_began, "nothing read the vectors into memory after the start"
                meanwhile = await ctx.documents.search(QUERY)
                assert meanwhile.semantic_skipped == vector_task.LOADING
                assert not any(hit.by_meaning for hit in meanwhile.hits)
                assert index.status().memory_bytes == 0
                HeldRead.release.set()
                await caught_up(index)
                after = await ctx.documents.search(QUERY)
                assert after.semantic_skipped is None
                assert [(h.doc_id, h.index, h.by_meaning) for h in after.hits] == [
                    (h.doc_id, h.index, h.by_meaning) for h in before.hits
                ]
        finally:
            HeldRead.release.set()  # (a failed assertion must not leave a worker thread waiting)
            nursery.cancel_scope.cancel()
