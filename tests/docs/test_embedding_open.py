"""The server's start does not wait for the vectors file to open.

Opening a big vectors file is seconds: every open checks every row for an orphan
(``store/vector_schema._heal``: 1.6-2.5 s at 600,000 rows), and the first open after
9b7a7ae indexes every row (``rows_digest``: 11.4 s there; notes/rv27-27.md item 13).
Until this change ``VectorTask.run`` opened the file before reporting started, and
``_wiring.py`` awaited that start, so no tool call was answered meanwhile.

The open is held here on a :class:`threading.Event` by a :class:`HeldOpen`, the real
:class:`~ctxtrio.store.vectors.VectorStore` whose ``open`` first waits for the test to
let it go (then opens the file as it always does), put where ``_wiring.py`` makes its
vectors stores. No clock decides anything: the guard's 60 s only turns a start that
waits for the open (the old behaviour) into a failure instead of a hang.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, ClassVar

import pytest
import trio

from ctxtrio import _wiring
from ctxtrio._app import open_context
from ctxtrio.docs.embedding import describe_semantic
from ctxtrio.store import vector_task
from ctxtrio.store.vectors import VectorStore
from testkit.fake_embeddings import FakeEmbeddings, quick_embedders, serve_fake_embeddings, served_config

from .embedder import BISECT, OTHER, QUERY, SYNONYMS, caught_up

if TYPE_CHECKING:
    from pathlib import Path

#: Longest a held open waits for the test: past it, the start waited for the open (see the module docstring).
GUARD_S = 60.0


class HeldOpen(VectorStore):
    """The real vectors store, whose ``open`` waits until ``release`` is set (then opens as always)."""

    release: ClassVar[threading.Event]

    def open(self) -> None:
        if not HeldOpen.release.wait(GUARD_S):
            raise AssertionError("the server's start waited for the vectors file's open")
        super().open()


@pytest.fixture(autouse=True)
def held_open(monkeypatch: pytest.MonkeyPatch) -> type[HeldOpen]:
    # QUERY_S: a query's vector over loopback HTTP on a loaded machine (what is asked here is wiring, not latency).
    quick_embedders(monkeypatch, poll_s=0.5, retry_max_s=0.2, query_s=10.0)
    HeldOpen.release = threading.Event()
    monkeypatch.setattr(_wiring, "VectorStore", HeldOpen)
    return HeldOpen


async def test_the_start_answers_by_keyword_while_the_vectors_file_opens(tmp_path: Path) -> None:
    """A server with --embed-model starts while its vectors files are still opening: an ingest and a
    search are answered meanwhile (the search by keyword, saying the vectors file is still opening,
    and context_status says so), and once the files are open the backfill runs and the same search
    finds the paraphrase by meaning. Before, ``open_context`` waited for both opens."""
    fake = FakeEmbeddings(synonyms=SYNONYMS)
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        config = served_config(tmp_path / "data", fake, url)
        try:
            async with open_context(config) as ctx:
                index, entries = ctx.documents.semantic, ctx.sessions.semantic
                assert index is not None and entries is not None
                assert not HeldOpen.release.is_set()
                await ctx.documents.ingest(text=OTHER, title="shutil")
                await ctx.documents.ingest(text=BISECT, title="bisect")
                by_words = await ctx.documents.search("sorted values inserted")
                assert by_words.hits and not any(hit.by_meaning for hit in by_words.hits)
                assert by_words.semantic_skipped == (
                    "semantic recall skipped: the vectors file is still opening (the server just started)"
                )
                assert index.status().state == entries.state == vector_task.OPENING
                assert describe_semantic(index.status()).endswith("; opening the vectors file")
                assert entries.describe().endswith("; opening the vectors file")
                assert fake.requests == []  # nothing embedded before the file is open
                HeldOpen.release.set()
                await caught_up(index)
                by_meaning = await ctx.documents.search(QUERY)
                assert by_meaning.semantic_skipped is None
                assert by_meaning.hits and by_meaning.hits[0].by_meaning
        finally:
            HeldOpen.release.set()  # (a failed assertion must not leave a worker thread waiting)
            nursery.cancel_scope.cancel()
