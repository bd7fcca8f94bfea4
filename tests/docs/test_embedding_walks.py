"""A search by meaning does not wait for the background embedder's walks of the vectors file.

A pass that starts after a change walks every row of the file (``VectorStore.tally``: 0.55 s at
600,000 rows; ``drop_except`` 0.14 s) holding the file's lock, and a search's scan of the matrix
in memory took that lock too, in a worker thread its QUERY_S deadline cannot abandon: under a
team's ingests a search waited for walk after walk (``stress/busy_search.py``). The scan now
takes only the matrix's own lock (``store/vector_memory.py``).

The walk is held here on a :class:`threading.Event` by a :class:`HeldWalk`, the real
:class:`~ctxtrio.store.vectors.VectorStore` whose first full tally after ``armed`` is set holds
the file's lock until the test releases it (then tallies as always), put where ``_wiring.py``
makes its vectors stores. No clock decides anything: the guard only turns a search that waits
for the walk (the old behaviour) into a failure instead of a hang.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar

import pytest
import trio

from ctxtrio import _wiring
from ctxtrio._app import open_context
from ctxtrio.store.vectors import VectorStore
from testkit.fake_embeddings import FakeEmbeddings, quick_embedders, serve_fake_embeddings, served_config

from .embedder import BISECT, OTHER, QUERY, SYNONYMS, caught_up

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio.store.vectors import Tally

#: Longest a held walk waits for the test: past it, a search waited for the walk (see the module docstring).
GUARD_S = 30.0
HEAPQ = "# heapq\n\nA priority queue kept as a heap: push and pop the smallest item.\n"


class HeldWalk(VectorStore):
    """The real vectors store, whose first full tally after ``armed`` holds the file's lock until ``release``."""

    armed: ClassVar[threading.Event]
    #: Set when the held walk began (the file's lock taken).
    walking: ClassVar[threading.Event]
    release: ClassVar[threading.Event]
    #: The held walk was released by its guard, not by the test: something waited for it that long.
    waited_out: ClassVar[bool]

    def tally(self, model: str, dim: int, *, journal: str | None = None) -> dict[str, Tally]:
        if journal is None and HeldWalk.armed.is_set():
            HeldWalk.armed.clear()
            with self._db("read"):  # the lock a walk of every row holds (vector_counts.item_tallies)
                HeldWalk.walking.set()
                HeldWalk.waited_out = not HeldWalk.release.wait(GUARD_S)
        return super().tally(model, dim, journal=journal)


@pytest.fixture(autouse=True)
def held_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    # QUERY_S: a query's vector over loopback HTTP on a loaded machine (what is asked here is the lock, not latency).
    quick_embedders(monkeypatch, poll_s=0.5, retry_max_s=0.2, query_s=10.0)
    HeldWalk.armed, HeldWalk.walking, HeldWalk.release = threading.Event(), threading.Event(), threading.Event()
    HeldWalk.waited_out = False
    monkeypatch.setattr(_wiring, "VectorStore", HeldWalk)


async def test_a_search_by_meaning_does_not_wait_for_a_pass_walking_the_vectors_file(tmp_path: Path) -> None:
    """While a pass (woken by an ingest) walks every row of the vectors file, a search is answered by meaning,
    with the same first hit as before the ingest, without waiting for the walk to end."""
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        try:
            async with open_context(served_config(tmp_path / "data", fake, url)) as ctx:
                index = ctx.documents.semantic
                assert index is not None
                await ctx.documents.ingest(text=OTHER, title="shutil")
                await ctx.documents.ingest(text=BISECT, title="bisect")
                await caught_up(index)
                before = await ctx.documents.search(QUERY)
                assert before.semantic_skipped is None and before.hits[0].by_meaning
                HeldWalk.armed.set()
                await ctx.documents.ingest(text=HEAPQ, title="heapq")  # wakes the embedder: a pass, its walk
                began = await trio.to_thread.run_sync(HeldWalk.walking.wait, GUARD_S)
                assert began, "no pass walked the vectors file after the ingest"
                meanwhile = await ctx.documents.search(QUERY)
                assert not HeldWalk.waited_out, "the search waited for the pass's walk of the vectors file"
                assert meanwhile.semantic_skipped is None
                first = meanwhile.hits[0]
                assert (first.doc_id, first.index, first.by_meaning) == (
                    before.hits[0].doc_id,
                    before.hits[0].index,
                    True,
                )
                HeldWalk.release.set()
                await caught_up(index)
                assert index.status().chunks_embedded == 3
        finally:
            HeldWalk.release.set()  # (a failed assertion must not leave a worker thread waiting)
            nursery.cancel_scope.cancel()
