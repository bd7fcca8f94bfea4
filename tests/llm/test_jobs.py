"""The background summary worker against a slow streaming model: work outlives calls, resumes, stops cleanly."""

from __future__ import annotations

import math
import time
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING

import trio
import trio.testing

from ctxtrio.llm._slices import slice_text
from ctxtrio.llm.client import LLMClient, open_llm_client
from ctxtrio.llm.jobs import SummaryQueue
from ctxtrio.llm.messages import ChatMessage, LLMSettings
from ctxtrio.llm.summarizer import Summarizer
from ctxtrio.text.tokens import TokenModel, TokenModelRef
from testkit.deadlines import until

from .fake_stream import FakeModel, open_fake_model
from .test_summarizer import DictCache, document

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

MODEL = TokenModel.flat()  # the slice counts below were worked out with the single-ratio model
TEXT = document(300)  # about 3,900 tokens: in a 4,096-token window, four slices and a merge
STEPS = len(slice_text(TEXT, max_tokens=1500, model=MODEL)) + 1
DEADLINE_S = 45.0


@asynccontextmanager
async def worker(model: FakeModel, queue: SummaryQueue | None = None) -> AsyncIterator[tuple[Summarizer, LLMClient]]:
    """A client of ``model`` and a summarizer whose background worker runs until the block ends."""
    async with open_llm_client(LLMSettings(model.base_url, timeout_s=120.0)) as client, trio.open_nursery() as nursery:
        summarizer = Summarizer(client, TokenModelRef(MODEL), context_tokens=lambda: 4096, queue=queue)
        await nursery.start(summarizer.run_worker)
        yield summarizer, client
        nursery.cancel_scope.cancel()


def slow(**knobs: object) -> FakeModel:
    """The issue's model: 16 tokens/s generated, 60 prompt tokens/s, eight tokens per event."""
    return FakeModel(tokens_per_event=8, **knobs)  # type: ignore[arg-type]  # knobs are FakeModel fields


async def test_work_goes_on_between_calls_and_a_later_call_gets_the_llm_summary(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """Calls answer with a labelled stand-in while steps keep landing in the cache; a later call gets the LLM summary.

    (Wall times are measured by stress/slow_model.py in real time: under a MockClock,
    worker threads let virtual time jump.)
    """
    model = await open_fake_model(nursery, slow())
    cache = DictCache()
    calls: list[tuple[float, str, int]] = []  # (virtual seconds, method, steps kept)
    grew_between_calls = 0
    async with worker(model) as (summarizer, _):
        while not calls or calls[-1][1] != "llm":
            started = trio.current_time()
            summary = await summarizer.summarize(TEXT, target_tokens=150, wait=until(started + DEADLINE_S), cache=cache)
            calls.append((trio.current_time() - started, summary.method, len(cache.entries)))
            if summary.method != "llm":
                assert "goes on in the background" in summary.note and "call again" in summary.note
                before = len(cache.entries)
                await trio.sleep(30.0)  # the host does something else; nobody waits
                grew_between_calls += len(cache.entries) - before  # the work went on meanwhile
            assert len(calls) <= 6
    assert calls[0][1] in ("extractive", "llm+extractive") and calls[-1][1] == "llm"
    assert grew_between_calls >= 1, calls
    assert len(cache.entries) == STEPS == 5  # four slices and the merge, each kept as it was done


async def test_a_restart_resumes_from_the_durable_steps(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    """Shut down mid-work, start again on the same cache: only the missing steps are asked for."""
    model = await open_fake_model(nursery, slow())
    cache = DictCache()
    async with worker(model) as (summarizer, _):
        await summarizer.summarize(TEXT, target_tokens=150, wait=until(trio.current_time() + 70.0), cache=cache)
    kept = dict(cache.entries)
    asked_before = len(model.served)
    assert 1 <= len(kept) < STEPS
    async with worker(model) as (summarizer, _):
        summary = await summarizer.summarize(TEXT, target_tokens=150, cache=cache)
    assert summary.method == "llm" and kept.items() <= cache.entries.items()
    resumed = model.served[asked_before:]
    assert len(resumed) == STEPS - len(kept)  # nothing kept is asked again
    answered = {served.prompt for served in model.served[:asked_before] if served.gone_at is None}
    assert len(answered) == len(kept) and not answered & {served.prompt for served in resumed}


async def test_shutdown_closes_the_stream_and_fails_the_waiters(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """Cancelling the worker mid-answer closes its stream (the model stops) and no waiter hangs."""
    model = await open_fake_model(nursery, slow())
    answers: list[str] = []

    async def call(summarizer: Summarizer) -> None:
        answers.append((await summarizer.summarize(TEXT, target_tokens=150, cache=DictCache())).note)

    async with trio.open_nursery() as calls:
        async with worker(model) as (summarizer, _):
            calls.start_soon(call, summarizer)
            while not model.served or model.served[0].generated == 0:
                await trio.sleep(0.5)
            job = next(iter(summarizer.queue._jobs.values()))
    await trio.sleep(5.0)
    assert answers and "shutting down" in answers[0]
    first = model.served[0]
    assert first.gone_at is not None and first.generated_after_gone <= 16
    assert first.generated < first.planned and model.generating == 0
    assert job.failure is not None and "shutting down" in job.failure


async def test_a_full_queue_answers_extractively_at_once(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    """The queue is bounded: a job beyond it is refused and the call says so, without waiting."""
    model = await open_fake_model(nursery, slow(prompt_rate=0.01))  # the first job never ends here
    # Virtual time stands still in this test: with autojump on, a loopback round trip
    # slower than the threshold (a busy CI core) let time jump to the first job's
    # first-token deadline, which opened the breaker, and the call was refused for that.
    clock.autojump_threshold = math.inf
    queue = SummaryQueue(size=1)
    async with worker(model, queue) as (summarizer, _):
        async with trio.open_nursery() as calls:
            calls.start_soon(partial(summarizer.summarize, document(300), target_tokens=150))
            while not model.served:  # the first job is running; real time passes in a thread, virtual time does not
                await trio.to_thread.run_sync(time.sleep, 0.01)
            calls.start_soon(partial(summarizer.summarize, document(300, start=400), target_tokens=150))
            while len(queue._jobs) < 2:  # and the second one is queued
                await trio.to_thread.run_sync(time.sleep, 0.01)
            stop_at = trio.current_time() + 45.0
            refused = await summarizer.summarize(document(300, start=800), target_tokens=150, wait=until(stop_at))
            calls.cancel_scope.cancel()
    assert refused.method == "extractive" and refused.note.startswith("the summary queue is full")
    assert not any("Step 800 " in served.prompt for served in model.served)  # never sent


async def test_instructions_reach_a_model_whose_template_drops_system_messages(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """The fake drops system messages like Gemma's template: instructions there are lost, ours in the user turn are not."""
    model = await open_fake_model(nursery, slow())
    async with worker(model) as (summarizer, client):
        lost = await client.complete(
            [ChatMessage("system", "Summarize the text."), ChatMessage("user", document(5))], max_tokens=400
        )
        summary = await summarizer.summarize(document(40), target_tokens=100)
    assert lost.text.startswith("Step 0 configures node-0")  # it carried on with the text
    assert summary.method == "llm" and summary.text.startswith("In short:")
    assert "Summarize the text below" in model.served[-1].prompt


async def test_a_job_queued_behind_another_says_so(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    """A call whose job waits behind another summary says it is queued, not '0 of 0 steps done'."""
    model = await open_fake_model(nursery, slow(prompt_rate=0.01))  # the first job never ends here
    clock.autojump_threshold = math.inf  # time moves only by the jump below (see the test above)
    async with worker(model) as (summarizer, _):
        async with trio.open_nursery() as calls:
            calls.start_soon(partial(summarizer.summarize, document(300), target_tokens=150, cache=DictCache()))
            while not model.served:  # the first job is with the model
                await trio.to_thread.run_sync(time.sleep, 0.01)

            async def past_the_deadline() -> None:
                while len(summarizer.queue._jobs) < 2:  # the second job is queued
                    await trio.to_thread.run_sync(time.sleep, 0.01)
                clock.jump(2.0)

            calls.start_soon(past_the_deadline)
            stop_at = trio.current_time() + 1.0
            waiting = await summarizer.summarize(
                document(300, start=400), target_tokens=150, wait=until(stop_at), cache=DictCache()
            )
            calls.cancel_scope.cancel()
    assert "goes on in the background (queued behind 1 other summary)" in waiting.note, waiting.note
