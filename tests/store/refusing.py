"""What the refusal tests of the background embedders share (tests/store/test_vector_refusal.py,
test_vector_too_large.py): a fake endpoint that fails as servers do, the waits for the embedders, and
``ctxtrio doctor --repair`` against an endpoint that takes every input."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import trio

from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings
from tests.cli.runner import Ran, cli
from tests.memory.test_semantic import entry_vectors
from tests.memory.test_semantic import opened as opened_sessions

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from ctxtrio import Context
    from ctxtrio.docs.embedding import SemanticIndex
    from ctxtrio.memory.semantic import EntryVectors

__all__ = [
    "ENTRIES",
    "RULE",
    "UBATCH",
    "Failing",
    "chunks_settled",
    "doctor_repair",
    "entries_embedded",
    "paused",
    "ruled_sections",
]

#: Session s1's entries (:func:`entries_embedded`).
ENTRIES = [f"Entry {i} is about topic{i} and detail{i}." for i in range(40)]


#: A table's rule (psql draws them so): a BERT model (all-MiniLM-L6-v2) makes each punctuation mark a token,
#: so its parts are cut to the model's window (text/wordpiece.py: 512 tokens), while the cold token estimate
#: counts a run of punctuation at 1/16 a character: one chunk of 50 tokens. A llama-server started with a
#: smaller physical batch (``--ubatch-size 256``) still refuses such a part with its HTTP 500.
RULE = "+----------" * 60
UBATCH = 256


@dataclass
class Failing(FakeEmbeddings):
    """While ``failing``: the one-word probe cannot connect (``probe_down``), every request gets HTTP 500
    (``crashed``), or 503 with llama-server's body while it loads its model (``loading``: tools/server/
    server-http.cpp, ``{"error": {"message": "Loading model", "type": "unavailable_error", "code": 503}}``);
    ``failed`` counts the requests so answered."""

    failing: str = "probe_down"
    failed: int = 0

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        if self.failing == "crashed":
            self.failed += 1
            return httpx.Response(500, json={"error": {"message": "model crashed"}})
        if self.failing == "loading":
            self.failed += 1
            error = {"message": "Loading model", "type": "unavailable_error", "code": 503}
            return httpx.Response(503, json={"error": error})
        if self.failing == "probe_down" and b'"probe"' in request.content:
            self.failed += 1
            raise httpx.ConnectError("connection refused (fake endpoint down)", request=request)
        return await super()._handle(request)


async def chunks_settled(index: SemanticIndex) -> None:
    with trio.fail_after(30):
        while True:
            status = index.status()
            if status.state == "caught up" and status.chunks_embedded + status.chunks_refused == status.chunks_total:
                return
            index.wake()
            await trio.sleep(0.05)


@asynccontextmanager
async def entries_embedded(tmp_path: Path, fake: FakeEmbeddings) -> AsyncIterator[tuple[Context, EntryVectors]]:
    """Session s1 holding ENTRIES, with the entries' embedder running against ``fake``."""
    async with opened_sessions(tmp_path) as ctx:
        for text in ENTRIES:
            await ctx.sessions.append("s1", text)
        async with entry_vectors(ctx, fake) as index:
            yield ctx, index


async def paused(task: SemanticIndex | EntryVectors, fake: Failing) -> None:
    """Wait until the task has paused for the endpoint, after it failed twice."""
    with trio.fail_after(30):
        while not (task.state == "endpoint unreachable" and fake.failed >= 2):
            await trio.sleep(0.05)


def ruled_sections(n: int, ruled: int) -> str:
    """paragraphs(n), section ``ruled`` ending in RULE."""
    return "\n\n".join(
        f"## Part {i}\n\nSection {i} explains topic{i} with example{i} and detail{i}." + ("\n\n" + RULE) * (i == ruled)
        for i in range(n)
    )


async def doctor_repair(data: Path) -> Ran:
    """``ctxtrio doctor --repair`` with a fake endpoint that takes every input (a server started again
    with a larger batch): what it printed and its exit code."""
    fixed = FakeEmbeddings()
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fixed)
        repaired = await cli(data, "doctor", "--repair", "--embed-model", fixed.model, "--embed-base-url", url)
        nursery.cancel_scope.cancel()
    return repaired
