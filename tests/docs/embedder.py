"""A background embedder over an open instance's documents, for the semantic recall tests (test_embedding*.py,
tests/store/test_vector_refusal.py): the fake endpoint's texts, the embedder wired as ``_wiring.py`` wires it,
and a wait until it has embedded every chunk; a backlog held at the endpoint and stepped batch by batch. The
``quick_retries`` and ``one_request_a_batch`` fixtures they use are tests/docs/conftest.py's."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio

from ctxtrio.docs.embedding import SemanticIndex
from ctxtrio.docs.service import repository_of
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.embeddings import Embedder
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.store.vectors import VectorStore
from testkit.fake_embeddings import FakeEmbeddings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ctxtrio._wiring import Wiring

__all__ = [
    "BASE",
    "BISECT",
    "OTHER",
    "QUERY",
    "SYNONYMS",
    "caught_up",
    "finish",
    "held_backlog",
    "paragraphs",
    "semantic",
    "step",
]

BASE = "http://embed.test/v1"
SYNONYMS = [{"leaderboard", "ranking"}, {"ordered", "sorted"}, {"scores", "values"}, {"arrive", "inserted"}]
BISECT = "# bisect\n\nKeep a list sorted as new values are inserted, without sorting it again each time.\n"
OTHER = "# shutil\n\nCopy whole directory trees and remove them; archives are made and unpacked here.\n"
QUERY = "leaderboard ordered when scores arrive"


def paragraphs(n: int) -> str:
    """A document of ``n`` short sections, each with words of its own."""
    return "\n\n".join(f"## Part {i}\n\nSection {i} explains topic{i} with example{i} and detail{i}." for i in range(n))


@asynccontextmanager
async def semantic(ctx: Wiring, fake: FakeEmbeddings) -> AsyncIterator[SemanticIndex]:
    """``ctx``'s documents with semantic recall on ``fake``, wired as ``_wiring.py`` does."""
    settings = LLMSettings(BASE, model=fake.model, concurrency=2)
    async with open_llm_client(settings, transport=fake.transport()) as client, trio.open_nursery() as nursery:
        index = SemanticIndex(
            repository_of(ctx.documents), Embedder(client, fake.model), VectorStore(ctx.data.vectors_path)
        )
        await nursery.start(index.run)
        ctx.documents.semantic = index
        try:
            yield index
        finally:
            ctx.documents.semantic = None
            nursery.cancel_scope.cancel()


async def caught_up(index: SemanticIndex) -> None:
    """Wait until every chunk of the documents there are is embedded (30 s at most)."""
    with trio.fail_after(30):
        await _caught_up(index)


async def _caught_up(index: SemanticIndex) -> None:
    while not (
        index.status().state == "caught up" and index.status().chunks_embedded == index.status().chunks_total > 0
    ):
        index.wake()
        await trio.sleep(0.1)


def held_backlog() -> FakeEmbeddings:
    """An endpoint that answers only the requests :func:`step` lets on: a pass cannot finish its backlog while the
    test ingests and forgets, however slow the machine. (With ``delay_s`` on real time, whether the backlog outlasted
    the test's ingests was the machine's pace, rv27's review item 18: with each ingest 8 s slower, all five tests of
    test_embedding_moves.py failed.) Use it with the ``one_request_a_batch`` fixture."""
    return FakeEmbeddings(answers=0)


async def step(fake: FakeEmbeddings, batches: int) -> None:
    """Let the pass's next ``batches`` be answered, and wait until it holds at the one after: the rows of those
    are stored and the catalog looked at after each (one request a batch, one batch at a time)."""
    with trio.fail_after(30):  # (only a hang guard: nothing here waits for a pace)
        await fake.answer(batches)
        await fake.holding()


async def finish(fake: FakeEmbeddings, index: SemanticIndex) -> None:
    """Answer every request from now on and wait until every chunk is embedded."""
    fake.release()
    await caught_up(index)
