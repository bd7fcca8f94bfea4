"""Background work beyond one summary: outline one-liners, resuming a finished job, the first-token deadline."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from ctxtrio._errors import LLMTimeoutError, LLMUnavailableError
from ctxtrio.llm.breaker import BreakerState
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.messages import ChatMessage, LLMSettings
from testkit.deadlines import until

from .fake_stream import FakeModel, open_fake_model
from .test_jobs import TEXT, slow, worker
from .test_summarizer import DictCache, document

CHUNKS = [document(10, start=10 * n) for n in range(8)]


async def test_outline_one_liners_go_on_in_the_background(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    """Past the deadline the rest are labelled first sentences; the job goes on and a later call has every line."""
    model = await open_fake_model(nursery, slow())
    cache = DictCache()
    async with worker(model) as (summarizer, _):
        first = await summarizer.one_liners(CHUNKS, wait=until(trio.current_time() + 12.0), cache=cache)
        pending = [line for line in first if line.method != "llm"]
        assert pending  # eight requests of ~5 s each cannot all be done in 12 s
        assert all(line.method == "extractive" and "go on in the background" in line.note for line in pending)
        assert all(line.text.startswith("Step ") for line in pending)  # the chunk's first sentence
        with trio.fail_after(300.0):  # nobody waits; the worker carries on (polled: its threads need real time)
            while len(cache.entries) < len(CHUNKS):
                await trio.sleep(1.0)
        again = await summarizer.one_liners(CHUNKS, wait=until(trio.current_time() + 12.0), cache=cache)
    assert [line.method for line in again] == ["llm"] * len(CHUNKS)
    assert len(model.served) == len(CHUNKS)  # each chunk asked once, across both calls


async def test_one_liners_of_an_echoing_model_are_never_kept(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """Echoed one-liners are rejected: nothing cached, every line extractive with the reason."""
    model = await open_fake_model(nursery, slow(behaviour="echo"))
    cache = DictCache()
    async with worker(model) as (summarizer, _):
        lines = await summarizer.one_liners(CHUNKS[:3], wait=until(trio.current_time() + 60.0), cache=cache)
    assert cache.entries == {}
    assert all(line.method == "extractive" and "LLM answer rejected" in line.note for line in lines)


async def test_resume_hands_back_a_finished_job_and_restarts_a_missing_one(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """resume() never waits: it queues the job again from what the cache keeps, and returns the LLM summary once done."""
    model = await open_fake_model(nursery, slow())
    cache = DictCache()
    async with worker(model) as (summarizer, _):
        await summarizer.summarize(TEXT, target_tokens=150, wait=until(trio.current_time() + 70.0), cache=cache)
    kept = len(cache.entries)
    assert kept >= 1
    async with worker(model) as (summarizer, _):  # a restart: no job is running
        started = trio.current_time()
        assert await summarizer.resume(TEXT, target_tokens=150, cache=cache) is None
        assert trio.current_time() - started < 1.0
        done = None
        with trio.fail_after(600.0):
            while done is None:
                await trio.sleep(1.0)
                done = await summarizer.resume(TEXT, target_tokens=150, cache=cache)
    assert done.method == "llm"
    assert len(model.served) - kept <= len(cache.entries)  # resumed from the kept steps


async def test_a_server_silent_before_the_first_token_fails_at_the_first_token_deadline(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """Headers and pings but no token: LLMTimeoutError at first_token_s plus the prompt allowance, not timeout_s."""
    model = await open_fake_model(nursery, FakeModel(behaviour="silent", ping_s=15.0))
    settings = LLMSettings(model.base_url, timeout_s=120.0, first_token_s=20.0, prompt_tokens_per_s=25.0)
    prompt = "word " * 250  # 1,250 characters: at most 625 tokens, 25 s of prompt at 25 tokens/s
    async with open_llm_client(settings) as client:
        started = trio.current_time()
        with pytest.raises(LLMTimeoutError, match="no first token within 45 s"):
            await client.complete([ChatMessage("user", prompt)], max_tokens=50)
        assert trio.current_time() - started == pytest.approx(45.0, abs=0.5)
        assert client.breaker_state is BreakerState.OPEN
    await trio.sleep(1.0)
    assert model.served[0].gone_at is not None and model.generating == 0


async def test_a_slow_model_that_streams_is_not_cut_by_the_first_token_deadline(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """Tokens keep coming for longer than first_token_s: the answer is read to the end."""
    model = await open_fake_model(nursery, FakeModel(behaviour="echo", gen_rate=2.0, prompt_rate=60.0))
    settings = LLMSettings(model.base_url, timeout_s=120.0, first_token_s=10.0, stall_s=30.0)
    async with open_llm_client(settings) as client:
        completion = await client.complete([ChatMessage("user", "word " * 100)], max_tokens=100)
    assert len(completion.text.split()) == 100 and trio.current_time() > 50.0  # 100 tokens at 2 per second
    assert client.breaker_state is BreakerState.CLOSED


async def test_a_stream_cut_mid_answer_is_a_failure_not_an_answer(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """A connection closed after a few tokens (no [DONE], no finish reason): LLMUnavailableError, breaker open."""
    model = await open_fake_model(nursery, FakeModel(behaviour="echo", drop_after=5))  # 50 words planned
    async with open_llm_client(LLMSettings(model.base_url)) as client:
        with pytest.raises(LLMUnavailableError, match="ended mid-answer after 5 chunks"):
            await client.complete([ChatMessage("user", "word " * 50)], max_tokens=100)
        assert client.breaker_state is BreakerState.OPEN
