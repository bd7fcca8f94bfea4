"""A search's query vector comes within QUERY_S while the background embedder backfills, on a server that
computes one request at a time (testkit's ``seconds_per_token``: llama-cpp-python's server, one model behind
its locks), and the backfill still sends every text once."""

from __future__ import annotations

import trio
import trio.testing

from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.embeddings import BATCH_S, Embedder
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.store.vector_task import QUERY_S
from testkit.fake_embeddings import FakeEmbeddings, bert_tokens

BASE = "http://embed.test/v1"
#: A CPU-bound model: a 100-word part takes 0.1 s, a background batch of 16 such parts 1.6 s.
SECONDS_PER_TOKEN = 0.001
#: The background embedder's batches (docs/embedding.py, BATCH_PARTS = 16), each text about 100 tokens.
BATCHES = [[f"part {batch}.{n} " + "word " * 98 for n in range(16)] for batch in range(4)]


async def _backfill_with_searches(fake: FakeEmbeddings) -> tuple[list[list[float]], list[float | None]]:
    """The background batches, one after another, while a search asks a query every 0.37 s: the vectors, and
    how long each query's vector took (None: not within QUERY_S, the search went without meaning)."""
    settings = LLMSettings(BASE, model=fake.model, concurrency=2)  # as _wiring.py opens the embedder's client
    vectors: list[list[float]] = []
    waits: list[float | None] = []
    async with open_llm_client(settings, transport=fake.transport()) as client:
        embedder = Embedder(client, fake.model)

        async def searches(done: trio.Event) -> None:
            number = 0
            while not done.is_set():
                await trio.sleep(0.37)
                number += 1
                asked = trio.current_time()
                with trio.move_on_after(QUERY_S):
                    await embedder.query(f"question {number} about fins")
                    waits.append(trio.current_time() - asked)
                    continue
                waits.append(None)

        done = trio.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(searches, done)
            for batch in BATCHES:
                vectors += await embedder.documents(batch)
            done.set()
    return vectors, waits


async def test_queries_are_answered_within_query_s_during_a_backfill(autojump_clock: trio.testing.MockClock) -> None:
    """Each 1.6 s batch, sent whole, made a query asked during it wait past QUERY_S; sent in requests of
    about BATCH_S each, every query waits behind one such request at most."""
    fake = FakeEmbeddings(seconds_per_token=SECONDS_PER_TOKEN)
    vectors, waits = await _backfill_with_searches(fake)
    assert None not in waits, waits
    assert len(waits) >= 10, waits
    texts = [text for batch in BATCHES for text in batch]
    assert len(vectors) == len(texts)
    # The background sent every text once, in order, and no request of it took past BATCH_S once the first
    # (FIRST_TEXTS texts, 0.4 s) gave the server's pace.
    background = [request for request in fake.requests if request[0].startswith("part ")]
    assert [text for request in background for text in request] == texts
    slowest = max(SECONDS_PER_TOKEN * sum(map(bert_tokens, request)) for request in background[1:])
    assert slowest <= BATCH_S, slowest


async def test_short_texts_go_several_to_a_request(autojump_clock: trio.testing.MockClock) -> None:
    """Requests are sized by the server's pace, not cut to one text each: short texts (leads of 12 words)
    go many to a request, so the backfill pays few more round trips than before."""
    fake = FakeEmbeddings(seconds_per_token=SECONDS_PER_TOKEN)
    leads = [f"lead {n}: the zebrafish regrows its fins within weeks of a cut" for n in range(64)]
    async with open_llm_client(
        LLMSettings(BASE, model=fake.model, concurrency=2), transport=fake.transport()
    ) as client:
        embedder = Embedder(client, fake.model)
        for start in range(0, len(leads), 16):
            await embedder.documents(leads[start : start + 16])
    assert fake.embedded == leads
    # 0.014 s a lead: about ten a request once the first answer gave the pace (the first carries one).
    assert len(fake.requests) <= 10, [len(request) for request in fake.requests]
