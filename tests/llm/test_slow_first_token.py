"""A first token that is slow under load, not hung: asked again once, no breaker verdict, and the wait learns.

The fake plays llama-cpp-python 0.3.36 (``interrupt_requests``, ``prompt_cache``): headers at
once, the prompt evaluated under the model lock before the first chunk, an abandoned
evaluation run to its end and kept in the KV cache (see ``fake_stream``'s docstring for
the sources), so the same prompt sent again starts at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from ctxtrio._errors import LLMTimeoutError
from ctxtrio.llm.breaker import BreakerState
from ctxtrio.llm.client import LLMClient, open_llm_client
from ctxtrio.llm.messages import ChatMessage, LLMSettings
from ctxtrio.llm.summarizer import Summarizer
from ctxtrio.text.tokens import TokenModelRef
from testkit.deadlines import until

from .fake_stream import FakeModel, open_fake_model
from .test_jobs import MODEL
from .test_summarizer import DictCache, document

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

#: 1,250 characters: the settings' first-token wait is 20 + 625 / 25 = 45 s.
LONG = [ChatMessage("user", "Summarize the text below.\n" + "word " * 244 + "word")]


def loaded(**knobs: object) -> FakeModel:
    """llama-cpp-python on a loaded machine: 5 prompt tokens/s, so LONG takes about 55 s to its first token."""
    settings: dict[str, object] = {"prompt_rate": 5.0, "tokens_per_event": 4, **knobs}
    return FakeModel(interrupt_requests=True, prompt_cache=True, **settings)  # type: ignore[arg-type]  # knobs are FakeModel fields


def client_of(model: FakeModel) -> AbstractAsyncContextManager[LLMClient]:
    """A client of ``model`` with the test's settings: first-token wait 20 s + prompt at 25 tokens/s, at most 120 s."""
    return open_llm_client(LLMSettings(model.base_url, timeout_s=120.0, first_token_s=20.0, prompt_tokens_per_s=25.0))


async def warm(client: LLMClient) -> None:
    """One short answer: the server has evaluated a prompt for this client."""
    await client.complete([ChatMessage("user", "Summarize: port 80.")], max_tokens=8)


async def test_a_slow_first_token_is_asked_again_and_answers_with_the_breaker_closed(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """No first token in 45 s from a server that evaluates prompts: the same request goes again
    at once, waits for the abandoned evaluation and starts from its cache; the breaker stays closed."""
    model = await open_fake_model(nursery, loaded())
    async with client_of(model) as client:
        await warm(client)
        started = trio.current_time()
        completion = await client.complete(LONG, max_tokens=40)
        took = trio.current_time() - started
        assert client.breaker_state is BreakerState.CLOSED
        assert client.first_token_stretch >= 2.0  # the next long prompt waits longer at once
    asked = [served for served in model.served if served.prompt == LONG[0].content]
    assert len(asked) == 2 and asked[0].gone_at is not None
    assert 45.0 < took < 90.0 and completion.text.startswith("In short")


async def test_llama_cpp_python_that_only_tokenized_gets_the_retry_too(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """The first chat ever is slow, on a server that answered /extras/tokenize (llama-cpp-python:
    the same model lock, an abandoned evaluation finished and reused): asked again, not a failure."""
    model = await open_fake_model(nursery, loaded())
    async with client_of(model) as client:
        assert await client.tokenize("hello") is not None and client.tokenize_style == "llama-cpp-python"
        await client.complete(LONG, max_tokens=40)
        assert client.breaker_state is BreakerState.CLOSED
    assert len(model.served) == 2


async def test_a_server_that_never_evaluated_for_us_fails_at_the_first_wait(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """llama.cpp-style (its /tokenize needs no slot): a tokenize answered proves nothing about the
    slot, so a first chat with headers and pings but no token opens the breaker at 45 s, as before."""
    model = await open_fake_model(nursery, FakeModel(behaviour="silent", ping_s=15.0))
    async with client_of(model) as client:
        assert await client.tokenize("hello") is not None and client.tokenize_style == "llama.cpp/vLLM"
        started = trio.current_time()
        with pytest.raises(LLMTimeoutError, match=r"no first token within 45 s$"):
            await client.complete(LONG, max_tokens=40)
        assert trio.current_time() - started == pytest.approx(45.0, abs=0.5)
        assert client.breaker_state is BreakerState.OPEN


async def test_a_server_that_hangs_after_working_opens_the_breaker_after_the_retry(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """It answered once, then never sends a first token again: one retry with twice the wait, then
    LLMTimeoutError and the breaker open, at 45 + 90 s (a server that never evaluated opens it at 45)."""
    model = await open_fake_model(nursery, loaded(ping_s=15.0))
    async with client_of(model) as client:
        await warm(client)
        model.behaviour = "silent"
        started = trio.current_time()
        with pytest.raises(LLMTimeoutError, match=r"no first token within 90 s \(sent again after 45 s"):
            await client.complete(LONG, max_tokens=40)
        assert trio.current_time() - started == pytest.approx(135.0, abs=0.5)
        assert client.breaker_state is BreakerState.OPEN


async def test_a_slow_first_token_teaches_the_wait(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    """A first token after 30 s of a 45 s wait stretches the next wait to 60 s: a prompt that
    then takes 55 s is answered by its first request."""
    model = await open_fake_model(nursery, FakeModel(prompt_rate=5.0, tokens_per_event=4))
    async with client_of(model) as client:
        model.prompt_rate = (len(LONG[0].content.split()) + 11) / 30.0  # LONG's first token after 30 s
        await client.complete(LONG, max_tokens=8)
        assert client.first_token_stretch == pytest.approx(60.0 / 45.0, rel=0.05)
        model.prompt_rate = 5.0  # about 55 s now: past the settings' 45 s, within the learnt 60 s
        await client.complete(LONG, max_tokens=8)
        assert client.breaker_state is BreakerState.CLOSED
    assert len(model.served) == 2


async def test_outline_one_liners_converge_on_a_loaded_server_in_bounded_calls(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """Eight one-liners whose prompts each take longer than the settings' first-token wait (the
    stress run that opened the breaker): repeated 45 s calls get every line from the LLM in at
    most 12 calls, each chunk asked at most twice, the breaker closed after every call."""
    chunks = [document(10, start=10 * n) for n in range(8)]
    model = await open_fake_model(nursery, loaded(prompt_rate=3.5))
    cache = DictCache()
    async with client_of(model) as client, trio.open_nursery() as inner:
        summarizer = Summarizer(client, TokenModelRef(MODEL), context_tokens=lambda: 4096)
        await inner.start(summarizer.run_worker)
        await warm(client)
        for calls in range(1, 13):
            lines = await summarizer.one_liners(
                chunks, cache=cache, job_key="outline", wait=until(trio.current_time() + 45.0)
            )
            assert client.breaker_state is BreakerState.CLOSED, calls
            if all(line.method == "llm" for line in lines):
                break
        inner.cancel_scope.cancel()
    assert [line.method for line in lines] == ["llm"] * 8, [line.note for line in lines]
    asked = [served.prompt for served in model.served[1:]]
    assert len(set(asked)) == 8 and all(asked.count(prompt) <= 2 for prompt in asked)
    assert asked.count(asked[0]) == 2  # the first one was slow: asked again
