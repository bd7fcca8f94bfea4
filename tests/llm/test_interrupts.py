"""Streams a llama-cpp-python server cuts off for another request: retried, never kept, no breaker."""

from __future__ import annotations

import httpx
import pytest
import trio
import trio.testing

from ctxtrio._errors import LLMInterruptedError
from ctxtrio.llm.breaker import BreakerState
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.messages import ChatMessage, LLMSettings
from ctxtrio.llm.summarizer import Summarizer
from ctxtrio.text.tokens import TokenModel, TokenModelRef

from .fake_stream import FakeModel, open_fake_model
from .test_summarizer import DictCache, document

ASK = [ChatMessage("user", "Summarize the text below.\n\n" + "Port 8003 stays open for 9 days. " * 20)]


async def _other_client(root: str, at: float) -> None:
    """Another program asks the same server for a token count at ``at`` (virtual time)."""
    await trio.sleep_until(at)
    async with httpx.AsyncClient(trust_env=False, timeout=None) as other:
        await other.post(f"{root}/extras/tokenize", json={"input": "hello"})


@pytest.mark.parametrize(("at", "what"), [(0.5, "prompt evaluation"), (8.0, "generation")])
async def test_a_cut_off_stream_is_interrupted_not_a_failure(
    nursery: trio.Nursery, clock: trio.testing.MockClock, at: float, what: str
) -> None:
    """Another request during prompt evaluation (no content at all) or mid-answer (truncated):
    LLMInterruptedError, and the breaker stays closed."""
    model = await open_fake_model(nursery, FakeModel(interrupt_requests=True, behaviour="echo"))
    nursery.start_soon(_other_client, model.base_url.removesuffix("/v1"), at)
    async with open_llm_client(LLMSettings(model.base_url)) as client:
        with pytest.raises(LLMInterruptedError, match="without a finish reason") as raised:
            await client.complete(ASK, max_tokens=500)  # about 3.5 s of prompt, then 9 s of answer
        assert client.breaker_state is BreakerState.CLOSED, what
    assert model.interrupted == 1 and model.served[0].generated < model.served[0].planned
    assert ("after 1 chunks (0 characters)" in str(raised.value)) == (what == "prompt evaluation")


async def test_a_summary_interrupted_by_a_second_client_goes_on_and_keeps_only_whole_answers(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """A second client hits the server mid-summary, three times: each cut-off step is asked
    again, the summary is the LLM's, the breaker stays closed, and every cached text is a
    whole answer (the fake's answers end with a full stop; truncated ones do not)."""
    model = await open_fake_model(nursery, FakeModel(interrupt_requests=True, tokens_per_event=2))
    root = model.base_url.removesuffix("/v1")
    for at in (20.0, 60.0, 61.0):
        nursery.start_soon(_other_client, root, at)
    cache = DictCache()
    async with open_llm_client(LLMSettings(model.base_url, timeout_s=120.0)) as client:
        summarizer = Summarizer(client, TokenModelRef(TokenModel.cold()), context_tokens=lambda: 4096)
        summary = await summarizer.summarize(document(300), target_tokens=200, cache=cache)
        assert client.breaker_state is BreakerState.CLOSED
    assert model.interrupted >= 2
    assert summary.method == "llm", summary.note
    assert cache.entries and all(text.endswith(".") for text in cache.entries.values())
