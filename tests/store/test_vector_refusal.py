"""One input the embedding endpoint refuses (HTTP 400) is recorded as refused; the rest is embedded.

Through the real client and its breaker (``llm/_requests.py``) and both background embedders
(``store/vector_task.py``): chunks and session entries. Before the refusal counted as an answer,
the 400 opened the breaker, the one-word probe found it open, nothing was recorded as refused, and
the task sent the whole batch again for ever: nothing more of that journal was embedded.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import pytest
import trio

from ctxtrio.docs.embedding import describe_semantic
from testkit.fake_embeddings import FakeEmbeddings, quick_embedders
from tests.docs.conftest import opened as opened_docs
from tests.docs.test_embedding import semantic
from tests.memory.test_semantic import entry_vectors, settled
from tests.memory.test_semantic import opened as opened_sessions

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from ctxtrio import Context
    from ctxtrio.docs.embedding import SemanticIndex
    from ctxtrio.memory.semantic import EntryVectors

ENTRIES = [f"Entry {i} is about topic{i} and detail{i}." for i in range(40)]
#: Only ENTRIES[7] (and section 7 of the document) holds it ("topic7" alone would match topic70 ...).
REFUSED = "topic7 "


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real time here (the store's worker threads), so the embedder retries and polls quickly."""
    quick_embedders(monkeypatch, poll_s=0.2, retry_max_s=0.2)


@dataclass
class Failing(FakeEmbeddings):
    """While ``failing``: the one-word probe cannot connect (``probe_down``), or every request gets HTTP 500
    (``crashed``); ``failed`` counts the requests so answered."""

    failing: str = "probe_down"
    failed: int = 0

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        if self.failing == "crashed":
            self.failed += 1
            return httpx.Response(500, json={"error": {"message": "model crashed"}})
        if self.failing == "probe_down" and b'"probe"' in request.content:
            self.failed += 1
            raise httpx.ConnectError("connection refused (fake endpoint down)", request=request)
        return await super()._handle(request)


def _sections(n: int) -> str:
    return "\n\n".join(f"## Part {i}\n\nSection {i} explains topic{i} with example{i} and detail{i}." for i in range(n))


async def _chunks_settled(index: SemanticIndex) -> None:
    with trio.fail_after(30):
        while True:
            status = index.status()
            if status.state == "caught up" and status.chunks_embedded + status.chunks_refused == status.chunks_total:
                return
            index.wake()
            await trio.sleep(0.05)


@asynccontextmanager
async def _entries_embedded(tmp_path: Path, fake: FakeEmbeddings) -> AsyncIterator[tuple[Context, EntryVectors]]:
    """Session s1 holding ENTRIES, with the entries' embedder running against ``fake``."""
    async with opened_sessions(tmp_path) as ctx:
        for text in ENTRIES:
            await ctx.sessions.append("s1", text)
        async with entry_vectors(ctx, fake) as index:
            yield ctx, index


async def _paused(task: SemanticIndex | EntryVectors, fake: Failing) -> None:
    """Wait until the task has paused for the endpoint, after it failed twice."""
    with trio.fail_after(30):
        while not (task.state == "endpoint unreachable" and fake.failed >= 2):
            await trio.sleep(0.05)


async def test_a_chunk_refused_alone_is_recorded_and_every_other_chunk_embedded(tmp_path: Path) -> None:
    fake = FakeEmbeddings(refuse={REFUSED})
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=_sections(40), title="parts")
        async with semantic(ctx, fake) as index:
            await _chunks_settled(index)
            status = index.status()
    assert (status.chunks_refused, status.chunks_embedded) == (1, doc.doc.chunks - 1)
    assert "1 refused by the endpoint; caught up" in describe_semantic(status)
    assert fake.refusals and not any(REFUSED in text for text in fake.embedded)
    assert "probe" in fake.embedded  # the endpoint answered the probe: the refusal was the input's


async def test_a_session_entry_refused_alone_is_recorded_and_every_other_entry_embedded(tmp_path: Path) -> None:
    fake = FakeEmbeddings(refuse={REFUSED})
    async with _entries_embedded(tmp_path, fake) as (ctx, index):
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
    async with _entries_embedded(tmp_path, fake) as (_, index):
        await _paused(index, fake)
        assert index.stored[1] == 0
        fake.failing, fake.refuse = "", set()  # (back, with a model that takes every input)
        await settled(index)
        assert index.stored[:2] == (len(ENTRIES), 0)


async def test_a_server_error_pauses_the_chunks_and_records_no_refusal(tmp_path: Path) -> None:
    """HTTP 500 for every request still opens the breaker: the task waits, nothing is marked refused."""
    fake = Failing(failing="crashed")
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=_sections(10), title="parts")
        async with semantic(ctx, fake) as index:
            await _paused(index, fake)
            status = index.status()
            assert (status.chunks_refused, status.chunks_embedded) == (0, 0)
            fake.failing = ""
            await _chunks_settled(index)
            status = index.status()
    assert (status.chunks_refused, status.chunks_embedded) == (0, doc.doc.chunks)
    assert fake.refusals == []
