"""One input the embedding endpoint refuses is recorded as refused; the rest is embedded.

Refused with HTTP 400 (OpenAI, llama-cpp-python), or with llama.cpp's llama-server's 500 for an input
longer than its physical batch (``testkit/fake_embeddings.TOO_LARGE``), through the real client and its
breaker (``llm/_requests.py``, ``llm/client.py``) and both background embedders (``store/vector_batch.py``):
chunks and session entries. Before a refusal counted as an answer, it opened the breaker, the one-word
probe found it open, nothing was recorded as refused, and the task sent the whole batch again for ever:
nothing more of that journal was embedded.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
import pytest
import trio

from ctxtrio.docs.embedding import describe_semantic
from ctxtrio.text.embedding import text_parts
from testkit.fake_embeddings import FakeEmbeddings, bert_tokens, quick_embedders, serve_fake_embeddings
from tests.cli.runner import Ran, cli
from tests.docs.conftest import opened as opened_docs
from tests.docs.embedder import semantic
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


async def _doctor_repair(data: Path) -> Ran:
    """``ctxtrio doctor --repair`` with a fake endpoint that takes every input (a server started again
    with a larger batch): what it printed and its exit code."""
    fixed = FakeEmbeddings()
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fixed)
        repaired = await cli(data, "doctor", "--repair", "--embed-model", fixed.model, "--embed-base-url", url)
        nursery.cancel_scope.cancel()
    return repaired


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


#: A table's rule (psql draws them so): a BERT model (all-MiniLM-L6-v2) makes each punctuation mark a token,
#: so its parts are cut to the model's window (text/wordpiece.py: 512 tokens), while the cold token estimate
#: counts a run of punctuation at 1/16 a character: one chunk of 50 tokens. A llama-server started with a
#: smaller physical batch (``--ubatch-size 256``) still refuses such a part with its HTTP 500.
RULE = "+----------" * 60
UBATCH = 256


def _ruled_sections(n: int, ruled: int) -> str:
    """_sections(n), section ``ruled`` ending in RULE."""
    return "\n\n".join(
        f"## Part {i}\n\nSection {i} explains topic{i} with example{i} and detail{i}." + ("\n\n" + RULE) * (i == ruled)
        for i in range(n)
    )


def test_the_long_input_is_too_large_for_llama_server_and_every_other_fits() -> None:
    """(The premise:) RULE's first part is over a 256-token batch; an entry of ENTRIES is far under."""
    assert bert_tokens(text_parts(RULE)[0].text) > UBATCH
    assert max(bert_tokens(part.text) for text in ENTRIES for part in text_parts(text)) < 20


async def test_a_chunk_too_large_for_llama_server_is_recorded_and_every_other_chunk_embedded(tmp_path: Path) -> None:
    """HTTP 500 "input is too large to process" for one chunk: that chunk is refused, every other one embedded;
    a restart sends none of them again."""
    fake = FakeEmbeddings(ubatch_tokens=UBATCH)
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=_ruled_sections(40, ruled=7), title="parts")
        async with semantic(ctx, fake) as index:
            await _chunks_settled(index)
            status = index.status()
    assert doc.doc.chunks >= 40
    assert (status.chunks_refused, status.chunks_embedded) == (1, doc.doc.chunks - 1)
    assert "1 refused by the endpoint; caught up" in describe_semantic(status)
    # The rule's chunk is two parts: the first, 511 tokens, refused; its second, 157 tokens, taken.
    alone = [request[0] for request in fake.refusals if len(request) == 1]
    assert alone and all(RULE[:100] in text and bert_tokens(text) > UBATCH for text in alone)
    ruled = [text for text in fake.embedded if RULE[:100] in text]
    assert len(ruled) == 1 and bert_tokens(ruled[0]) < UBATCH

    again = FakeEmbeddings(ubatch_tokens=UBATCH)
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        async with semantic(ctx, again) as index:
            await _chunks_settled(index)
            after = index.status()
    assert (after.chunks_refused, after.chunks_embedded) == (1, doc.doc.chunks - 1)
    assert (again.embedded, again.refusals) == ([], [])


async def test_an_entry_too_large_for_llama_server_is_refused_and_stays_so_after_a_restart(tmp_path: Path) -> None:
    """One entry of 40 gets HTTP 500 "too large": 39 embedded, 1 refused; a restart sends none of them again."""
    entries = [*ENTRIES[:7], RULE, *ENTRIES[8:]]
    fake = FakeEmbeddings(ubatch_tokens=UBATCH)
    async with opened_sessions(tmp_path) as ctx:
        for text in entries:
            await ctx.sessions.append("s1", text)
        async with entry_vectors(ctx, fake) as index:
            await settled(index)
            before = index.stored[:2]
            said = index.describe()
    assert before == (len(entries) - 1, 1)
    assert "1 refused by the endpoint; caught up" in said
    assert sorted(text for text in fake.embedded if text.startswith("Entry")) == sorted(set(entries) - {RULE})

    again = FakeEmbeddings(ubatch_tokens=UBATCH)
    async with opened_sessions(tmp_path) as ctx:
        async with entry_vectors(ctx, again) as index:
            await settled(index)
            after = index.stored[:2]
            await ctx.sessions.append("s1", "Entry 40 is about topic40.")
            await settled(index)
            added = index.stored[:2]
    assert after == before
    assert (again.embedded, again.refusals) == (["Entry 40 is about topic40."], [])
    assert added == (len(entries), 1)


#: Prose about quolls, then a psql table's rule, in one chunk: its prose parts fit a 256-token batch, the rule's
#: first part does not. "dasyures" is the fake's synonym of "quolls", in no text: only meaning finds them.
QUOLLS = (
    "# Quolls\n\nQuolls are carnivorous marsupials of Australia and New Guinea. They hunt at night for insects, "
    "birds, reptiles and small mammals, climb trees well, and rest by day in hollow logs, rock piles and burrows. "
    "Each female raises up to six young, carried in a pouch that opens backwards. Their numbers fell as cane "
    "toads spread, as foxes and cats were brought in, and as their forests were cleared for farms.\n\n" + RULE + "\n"
)


async def test_the_parts_a_server_takes_are_embedded_when_another_part_of_their_chunk_is_refused(
    tmp_path: Path,
) -> None:
    """A chunk of prose and a table, whose rule's first part is over llama-server's batch: the chunk was refused
    whole, its prose not found by meaning (measured at --ubatch-size 256: 921 of postgresql-doc-15's 11,647
    chunks, 48% of their text in parts the server takes). Now each of its parts is sent alone: the prose is
    embedded and found, the chunk counted refused; a restart sends nothing; after doctor --repair and a server
    that takes it, only the refused part is sent."""
    fake = FakeEmbeddings(ubatch_tokens=UBATCH, synonyms=[{"quolls", "dasyures"}])
    async with opened_docs(tmp_path, query_expansion=False) as ctx:
        doc = await ctx.documents.ingest(text=QUOLLS, title="quolls")
        assert (await ctx.documents.search("dasyures")).hits == ()
        async with semantic(ctx, fake) as index:
            await _chunks_settled(index)
            status = index.status()
            found = await ctx.documents.search("dasyures", limit=1)
    assert doc.doc.chunks == 1
    assert (status.chunks_refused, status.chunks_embedded) == (1, 0)
    assert [(hit.doc_id, hit.by_meaning) for hit in found.hits] == [(doc.doc.doc_id, True)]
    taken = [text for text in fake.embedded if text != "probe"]
    assert any("carnivorous marsupials" in text for text in taken)
    assert len(taken) == len(set(taken)) and all(bert_tokens(text) <= UBATCH for text in taken)

    again = FakeEmbeddings(ubatch_tokens=UBATCH)
    async with opened_docs(tmp_path) as ctx, semantic(ctx, again) as index:
        await _chunks_settled(index)
        assert (index.status().chunks_refused, again.embedded, again.refusals) == (1, [], [])

    repaired = await _doctor_repair(tmp_path / "data")
    assert "1 refused chunk to be sent again, by a running server within 5 s (else at its start)" in repaired.out
    fixed = FakeEmbeddings()
    async with opened_docs(tmp_path) as ctx, semantic(ctx, fixed) as index:
        await _chunks_settled(index)
        assert (index.status().chunks_refused, index.status().chunks_embedded) == (0, 1)
    (sent,) = fixed.embedded
    assert bert_tokens(sent) > UBATCH and RULE[:100] in sent


@dataclass
class CrashingAlone(Failing):
    """As Failing, but fine (``failing`` "") until it gets a request of one input holding ``crash_on``: from
    then on HTTP 500 to every request (``crashed``), as a server dying while the parts are sent one by one."""

    crash_on: str = ""

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        if (
            self.crash_on
            and self.crash_on in request.content.decode()
            and len(json.loads(request.content)["input"]) == 1
        ):
            self.failing, self.crash_on = "crashed", ""
        return await super()._handle(request)


async def test_a_server_failing_while_the_parts_go_one_by_one_marks_nothing_refused(tmp_path: Path) -> None:
    """The chunk is refused whole, then the server fails (500 to everything, the probe too) at the last of its
    parts sent alone: nothing is stored or marked refused (that part's error is not the part's), the task
    waits; once the server is back, the part over its batch is the only one refused, the other three embedded."""
    fake = CrashingAlone(failing="", crash_on="Quolls: ", ubatch_tokens=UBATCH)  # the last part sent: its lead
    async with opened_docs(tmp_path, query_expansion=False) as ctx:
        await ctx.documents.ingest(text=QUOLLS, title="quolls")
        async with semantic(ctx, fake) as index:
            await _paused(index, fake)
            assert (index.status().chunks_refused, index.status().chunks_embedded) == (0, 0)
            fake.failing = ""
            await _chunks_settled(index)
            status = index.status()
    assert (status.chunks_refused, status.vectors) == (1, 3)


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
            await _paused(index, fake)
            assert index.stored[:2] == (0, 0)
            fake.failing = ""
            await settled(index)
            assert index.stored[:2] == (len(entries) - 1, 1)


async def test_refusals_are_sent_again_after_doctor_repair_once_the_server_takes_them(tmp_path: Path) -> None:
    """A chunk and an entry refused by a server with a 256-token batch stay refused across a restart; once the
    server's batch is raised, ``ctxtrio doctor --repair`` forgets both refusals and the next start embeds both."""
    small = FakeEmbeddings(ubatch_tokens=UBATCH)
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=_ruled_sections(12, ruled=7), title="parts")
        await ctx.sessions.append("s1", "Entry 1 is about topic1.")
        await ctx.sessions.append("s1", RULE)
        async with semantic(ctx, small) as index:
            await _chunks_settled(index)
            assert index.status().chunks_refused == 1
            assert "refused ones are sent again after ctxtrio doctor --repair" in describe_semantic(index.status())
    async with opened_sessions(tmp_path) as sessions_ctx, entry_vectors(sessions_ctx, small) as entries:
        await settled(entries)
        assert entries.stored[:2] == (1, 1)

    repaired = await _doctor_repair(tmp_path / "data")
    assert repaired.code == 0, repaired.out
    assert "1 refused chunk to be sent again, by a running server within 5 s (else at its start)" in repaired.out
    assert "1 refused entry to be sent again, by a running server within 5 s (else at its start)" in repaired.out

    fixed = FakeEmbeddings()  # the server started again with a batch of 2,048
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        async with semantic(ctx, fixed) as index:
            await _chunks_settled(index)
            after = index.status()
    assert (after.chunks_refused, after.chunks_embedded) == (0, doc.doc.chunks)
    async with opened_sessions(tmp_path) as sessions_ctx, entry_vectors(sessions_ctx, fixed) as entries:
        await settled(entries)
        assert entries.stored[:2] == (2, 0)
    # The chunk's rule and the entry (two parts each, 661 characters of punctuation): the part of each refused
    # before, nothing else (the other parts were taken before, and their texts kept by the --repair).
    assert sum(RULE[:100] in text for text in fixed.embedded) == 2 and len(fixed.embedded) == 2
    assert all(bert_tokens(text) > UBATCH for text in fixed.embedded)


async def test_a_running_server_sends_the_refusals_doctor_repair_forgot(tmp_path: Path) -> None:
    """A running server noticed ``ctxtrio doctor --repair``'s forgetting only at its next start (part25): its
    passes stop short while nothing changed, so a user who raised the batch and repaired had to restart the host's
    server too, and its status still said "refused". Both embedders now see the forgetting in the vectors file
    (its meta counts them) at their next pass, and send what was refused, the server still running."""
    small = FakeEmbeddings(ubatch_tokens=UBATCH)
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=_ruled_sections(12, ruled=7), title="parts")
        await ctx.sessions.append("s1", "Entry 1 is about topic1.")
        await ctx.sessions.append("s1", RULE)
        async with semantic(ctx, small) as index, entry_vectors(ctx, small) as entries:
            await _chunks_settled(index)
            await settled(entries)
            assert (index.status().chunks_refused, entries.stored[:2]) == (1, (1, 1))
            small.ubatch_tokens = None  # the server started again with a batch of 2,048
            small.requests.clear()
            repaired = await _doctor_repair(tmp_path / "data")
            assert "1 refused entry to be sent again, by a running server within 5 s" in repaired.out, repaired.out
            with trio.fail_after(30):
                while index.status().chunks_refused or entries.stored[1]:
                    index.wake()
                    entries.wake()
                    await trio.sleep(0.05)
            await _chunks_settled(index)
            assert (index.status().chunks_embedded, entries.stored[:2]) == (doc.doc.chunks, (2, 0))
    assert len(small.embedded) == 2 and all(RULE[:100] in text for text in small.embedded)


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
    async with _entries_embedded(tmp_path, fake) as (ctx, index):
        await settled(index)
        fake.busy = 1
        await ctx.sessions.append("s1", "Entry 40 is about topic40 and detail40.")
        index.wake()
        await settled(index)
        stored = index.stored
    assert (stored[:2], fake.busy) == ((len(ENTRIES) + 1, 0), 0)
