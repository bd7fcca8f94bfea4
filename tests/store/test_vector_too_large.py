"""An input longer than llama.cpp's llama-server's physical batch (``--ubatch-size``) is refused with its HTTP 500
("input is too large to process", ``testkit/fake_embeddings.TOO_LARGE``): only that part is recorded as refused, the
other parts of its chunk and every other input are embedded, a server failing meanwhile marks nothing refused, and
``ctxtrio doctor --repair`` (or a running server, for what the repair forgot) sends the refused parts again once the
server takes them. (Split from test_vector_refusal.py, whose module says how a refusal used to stop a journal.)"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
import trio

from ctxtrio.docs.embedding import describe_semantic
from ctxtrio.text.embedding import text_parts
from testkit.fake_embeddings import FakeEmbeddings, bert_tokens
from tests.docs.conftest import opened as opened_docs
from tests.docs.embedder import semantic
from tests.memory.test_semantic import entry_vectors, settled
from tests.memory.test_semantic import opened as opened_sessions

from .refusing import ENTRIES, RULE, UBATCH, Failing, chunks_settled, doctor_repair, paused, ruled_sections

if TYPE_CHECKING:
    from pathlib import Path

    import httpx

#: The embedders retry and poll quickly (tests/store/conftest.py's fixture: real time here).
pytestmark = pytest.mark.usefixtures("quick_retries")


def test_the_long_input_is_too_large_for_llama_server_and_every_other_fits() -> None:
    """(The premise:) RULE's first part is over a 256-token batch; an entry of ENTRIES is far under."""
    assert bert_tokens(text_parts(RULE)[0].text) > UBATCH
    assert max(bert_tokens(part.text) for text in ENTRIES for part in text_parts(text)) < 20


async def test_a_chunk_too_large_for_llama_server_is_recorded_and_every_other_chunk_embedded(tmp_path: Path) -> None:
    """HTTP 500 "input is too large to process" for one chunk: that chunk is refused, every other one embedded;
    a restart sends none of them again."""
    fake = FakeEmbeddings(ubatch_tokens=UBATCH)
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=ruled_sections(40, ruled=7), title="parts")
        async with semantic(ctx, fake) as index:
            await chunks_settled(index)
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
            await chunks_settled(index)
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
            await chunks_settled(index)
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
        await chunks_settled(index)
        assert (index.status().chunks_refused, again.embedded, again.refusals) == (1, [], [])

    repaired = await doctor_repair(tmp_path / "data")
    assert "1 refused chunk to be sent again, by a running server within 5 s (else at its start)" in repaired.out
    fixed = FakeEmbeddings()
    async with opened_docs(tmp_path) as ctx, semantic(ctx, fixed) as index:
        await chunks_settled(index)
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
            await paused(index, fake)
            assert (index.status().chunks_refused, index.status().chunks_embedded) == (0, 0)
            fake.failing = ""
            await chunks_settled(index)
            status = index.status()
    assert (status.chunks_refused, status.vectors) == (1, 3)


async def test_refusals_are_sent_again_after_doctor_repair_once_the_server_takes_them(tmp_path: Path) -> None:
    """A chunk and an entry refused by a server with a 256-token batch stay refused across a restart; once the
    server's batch is raised, ``ctxtrio doctor --repair`` forgets both refusals and the next start embeds both."""
    small = FakeEmbeddings(ubatch_tokens=UBATCH)
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        doc = await ctx.documents.ingest(text=ruled_sections(12, ruled=7), title="parts")
        await ctx.sessions.append("s1", "Entry 1 is about topic1.")
        await ctx.sessions.append("s1", RULE)
        async with semantic(ctx, small) as index:
            await chunks_settled(index)
            assert index.status().chunks_refused == 1
            assert "refused ones are sent again after ctxtrio doctor --repair" in describe_semantic(index.status())
    async with opened_sessions(tmp_path) as sessions_ctx, entry_vectors(sessions_ctx, small) as entries:
        await settled(entries)
        assert entries.stored[:2] == (1, 1)

    repaired = await doctor_repair(tmp_path / "data")
    assert repaired.code == 0, repaired.out
    assert "1 refused chunk to be sent again, by a running server within 5 s (else at its start)" in repaired.out
    assert "1 refused entry to be sent again, by a running server within 5 s (else at its start)" in repaired.out

    fixed = FakeEmbeddings()  # the server started again with a batch of 2,048
    async with opened_docs(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        async with semantic(ctx, fixed) as index:
            await chunks_settled(index)
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
        doc = await ctx.documents.ingest(text=ruled_sections(12, ruled=7), title="parts")
        await ctx.sessions.append("s1", "Entry 1 is about topic1.")
        await ctx.sessions.append("s1", RULE)
        async with semantic(ctx, small) as index, entry_vectors(ctx, small) as entries:
            await chunks_settled(index)
            await settled(entries)
            assert (index.status().chunks_refused, entries.stored[:2]) == (1, (1, 1))
            small.ubatch_tokens = None  # the server started again with a batch of 2,048
            small.requests.clear()
            repaired = await doctor_repair(tmp_path / "data")
            assert "1 refused entry to be sent again, by a running server within 5 s" in repaired.out, repaired.out
            with trio.fail_after(30):
                while index.status().chunks_refused or entries.stored[1]:
                    index.wake()
                    entries.wake()
                    await trio.sleep(0.05)
            await chunks_settled(index)
            assert (index.status().chunks_embedded, entries.stored[:2]) == (doc.doc.chunks, (2, 0))
    assert len(small.embedded) == 2 and all(RULE[:100] in text for text in small.embedded)
