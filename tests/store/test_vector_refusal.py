"""One input the embedding endpoint refuses is recorded as refused; the rest is embedded.

Refused with HTTP 400 (OpenAI, llama-cpp-python), or with llama.cpp's llama-server's 500 for an input
longer than its physical batch (``testkit/fake_embeddings.TOO_LARGE``), through the real client and its
breaker (``llm/_requests.py``, ``llm/client.py``) and both background embedders (``store/vector_batch.py``):
chunks and session entries (llama-server's refusals of inputs too large: test_vector_too_large.py). Before a refusal counted as an answer, it opened the breaker, the one-word
probe found it open, nothing was recorded as refused, and the task sent the whole batch again for ever:
nothing more of that journal was embedded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import pytest

from ctxtrio.docs.embedding import describe_semantic
from testkit.fake_embeddings import FakeEmbeddings
from tests.docs.conftest import opened as opened_docs
from tests.docs.embedder import paragraphs, semantic
from tests.memory.test_semantic import entry_vectors, settled
from tests.memory.test_semantic import opened as opened_sessions

from .refusing import ENTRIES, RULE, UBATCH, Failing, chunks_settled, entries_embedded, paused

if TYPE_CHECKING:
    from pathlib import Path

#: The embedders retry and poll quickly (tests/store/conftest.py's fixture: real time here).
pytestmark = pytest.mark.usefixtures("quick_retries")

#: Only ENTRIES[7] (and section 7 of the document) holds it ("topic7" alone would match topic70 ...).
REFUSED = "topic7 "


async def test_a_chunk_refused_alone_is_recorded_and_every_other_chunk_embedded(tmp_path: Path) -> None:
    fake = FakeEmbeddings(refuse={REFUSED})
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=paragraphs(40), title="parts")
        async with semantic(ctx, fake) as index:
            await chunks_settled(index)
            status = index.status()
    assert (status.chunks_refused, status.chunks_embedded) == (1, doc.doc.chunks - 1)
    assert "1 refused by the endpoint; caught up" in describe_semantic(status)
    assert fake.refusals and not any(REFUSED in text for text in fake.embedded)
    assert "probe" in fake.embedded  # the endpoint answered the probe: the refusal was the input's


async def test_a_session_entry_refused_alone_is_recorded_and_every_other_entry_embedded(tmp_path: Path) -> None:
    fake = FakeEmbeddings(refuse={REFUSED})
    async with entries_embedded(tmp_path, fake) as (ctx, index):
        await settled(index)
        embedded, refused, _ = index.stored
        said = index.describe()
        found = await ctx.sessions.recall("s1", "topic39 detail39", limit=1)
    assert (embedded, refused) == (len(ENTRIES) - 1, 1)
    assert "1 refused by the endpoint; caught up" in said
    # Each entry once, but the refused; besides them only the probe and the recall's query.
    entries = [text for text in fake.embedded if text.startswith("Entry")]
    assert sorted(entries) == sorted(set(ENTRIES) - {ENTRIES[7]})
    assert found.semantic_skipped is None


async def test_an_endpoint_down_at_the_probe_pauses_and_records_no_refusal(tmp_path: Path) -> None:
    """The input refused, then the probe unanswered: the endpoint is down, not the input refused."""
    fake = Failing(refuse={REFUSED})
    async with entries_embedded(tmp_path, fake) as (_, index):
        await paused(index, fake)
        assert index.stored[1] == 0
        fake.failing, fake.refuse = "", set()  # (back, with a model that takes every input)
        await settled(index)
        assert index.stored[:2] == (len(ENTRIES), 0)


async def test_a_server_error_pauses_the_chunks_and_records_no_refusal(tmp_path: Path) -> None:
    """HTTP 500 for every request still opens the breaker: the task waits, nothing is marked refused."""
    fake = Failing(failing="crashed")
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=paragraphs(10), title="parts")
        async with semantic(ctx, fake) as index:
            await paused(index, fake)
            status = index.status()
            assert (status.chunks_refused, status.chunks_embedded) == (0, 0)
            fake.failing = ""
            await chunks_settled(index)
            status = index.status()
    assert (status.chunks_refused, status.chunks_embedded) == (0, doc.doc.chunks)
    assert fake.refusals == []


@pytest.mark.parametrize("failing", ["crashed", "loading"])
async def test_an_endpoint_failing_every_input_pauses_and_records_no_refusal(tmp_path: Path, failing: str) -> None:
    """HTTP 500 to every input (the one-word probe too), or 503 while a model loads: paused, nothing refused;
    once it answers, the entry too large for it is the only one refused."""
    entries = [*ENTRIES[:7], RULE, *ENTRIES[8:]]
    fake = Failing(failing=failing, ubatch_tokens=UBATCH)
    async with opened_sessions(tmp_path) as ctx:
        for text in entries:
            await ctx.sessions.append("s1", text)
        async with entry_vectors(ctx, fake) as index:
            await paused(index, fake)
            assert index.stored[:2] == (0, 0)
            fake.failing = ""
            await settled(index)
            assert index.stored[:2] == (len(entries) - 1, 1)


@dataclass
class Busy(FakeEmbeddings):
    """HTTP 500 (llama-server's shape, ``server_error``) to the next ``busy`` requests that are not the one-word
    probe, as a server busy or restarting for a moment answers; every other request as the fake does."""

    busy: int = 0

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        if self.busy and b'"probe"' not in request.content:
            self.busy -= 1
            return httpx.Response(500, json={"error": {"code": 500, "message": "busy", "type": "server_error"}})
        return await super()._handle(request)


async def test_a_server_error_of_a_moment_does_not_mark_a_new_entry_refused(tmp_path: Path) -> None:
    """One HTTP 500 to a new entry's request (sent alone, as appends come), the one-word probe answered: the
    entry was recorded refused for good (40 embedded, 1 refused, after passes and restarts). Now it is embedded."""
    fake = Busy()
    async with entries_embedded(tmp_path, fake) as (ctx, index):
        await settled(index)
        fake.busy = 1
        await ctx.sessions.append("s1", "Entry 40 is about topic40 and detail40.")
        index.wake()
        await settled(index)
        stored = index.stored
    assert (stored[:2], fake.busy) == ((len(ENTRIES) + 1, 0), 0)
