"""TokenCounter: exact counts through the real transport, the final check, the fallback."""

from __future__ import annotations

import trio
import trio.testing

from ctxtrio.llm.client import LLMClient, open_llm_client
from ctxtrio.llm.counting import TokenCounter
from ctxtrio.llm.messages import ChatMessage, LLMSettings
from ctxtrio.text.tokens import TokenModel, TokenModelRef
from testkit.fake_openai import FakeServer, open_fake_openai, true_tokens

from .fake_stream import FakeModel, open_fake_model

CSV = "".join(f"{n * 37 % 1000}.{n % 10},-{n * 91 % 1000}.5,{n * 13}\n" for n in range(200))


def _lines(room: int, model: TokenModel = TokenModel.flat(0.27)) -> str:
    """A packed answer that grows with its budget: CSV lines while the estimate fits (flat: too low)."""
    out: list[str] = []
    for line in CSV.splitlines(keepends=True):
        if model.estimate("".join(out) + line) > room:
            break
        out.append(line)
    return "".join(out)


async def test_without_exact_counts_the_estimate_is_used(nursery: trio.Nursery) -> None:
    """Before the calibrator says the model can tokenize, counts are estimates and no request is sent."""
    server = await open_fake_openai(nursery, FakeServer(tokenize="extras"))
    async with open_llm_client(LLMSettings(server.base_url)) as client:
        counter = TokenCounter(TokenModelRef(TokenModel.cold()), client)
        assert counter.kind == "cold-start"
        assert await counter.count(CSV) == TokenModel.cold().estimate(CSV)
    assert not server.requests


async def test_exact_counts_are_cached_per_model(nursery: trio.Nursery) -> None:
    """Exact counts come from /extras/tokenize once per (model, text); a model change recounts."""
    server = await open_fake_openai(nursery, FakeServer(tokenize="extras"))
    async with open_llm_client(LLMSettings(server.base_url)) as client:
        counter = TokenCounter(TokenModelRef(TokenModel.cold()), client)
        counter.set_model("fake-model-7b", exact=True)
        assert counter.kind == "exact"
        assert await counter.count(CSV) == 1 + true_tokens(CSV)  # BOS included: leans high by one
        assert await counter.count(CSV) == 1 + true_tokens(CSV)
        assert counter.round_trips == 1
        counter.set_model("other-model", exact=True)
        await counter.count(CSV)
        assert counter.round_trips == 2


async def test_fit_repacks_until_the_true_count_fits(nursery: trio.Nursery) -> None:
    """With an estimate that under-counts digits 3x, the final check repacks to fit the budget in true tokens."""
    server = await open_fake_openai(nursery, FakeServer(tokenize="llamacpp"))
    async with open_llm_client(LLMSettings(server.base_url)) as client:
        counter = TokenCounter(TokenModelRef(TokenModel.flat(0.27)), client)
        counter.set_model("fake-model-7b", exact=True)
        for budget in (100, 500, 1000):
            text, tokens = await counter.fit(budget, _lines, lambda answer: answer)
            assert tokens == true_tokens(text) <= budget
            assert true_tokens(_lines(budget)) > budget  # the estimate alone would overflow
            assert len(text) > 0


async def test_fit_costs_one_round_trip_when_the_estimate_leans_high(nursery: trio.Nursery) -> None:
    """When the packed answer already fits, the check is one tokenize request."""
    server = await open_fake_openai(nursery, FakeServer(tokenize="llamacpp"))
    async with open_llm_client(LLMSettings(server.base_url)) as client:
        counter = TokenCounter(TokenModelRef(TokenModel.flat(2.0)), client)
        counter.set_model("fake-model-7b", exact=True)
        text, tokens = await counter.fit(300, lambda room: _lines(room, counter.model), lambda answer: answer)
        assert tokens <= 300 and counter.round_trips == 1


async def test_a_dead_tokenizer_falls_back_to_the_estimate(nursery: trio.Nursery) -> None:
    """When the tokenize endpoint fails, the estimate is used and the read still answers."""
    server = await open_fake_openai(nursery, FakeServer(tokenize="llamacpp", mode="http500"))
    async with open_llm_client(LLMSettings(server.base_url)) as client:
        counter = TokenCounter(TokenModelRef(TokenModel.cold()), client)
        counter.set_model("fake-model-7b", exact=True)
        assert await counter.count(CSV) == TokenModel.cold().estimate(CSV)


async def _summary_streaming(nursery: trio.Nursery, client: LLMClient) -> trio.Event:
    """Start a 100-token answer streaming from ``client`` and wait 1 s into it; the event is set when it ends."""
    finished = trio.Event()

    async def summarize() -> None:
        await client.complete([ChatMessage("user", "word " * 100)], max_tokens=100)
        finished.set()

    nursery.start_soon(summarize)
    await trio.sleep(1.0)
    return finished


async def test_counting_does_not_wait_behind_our_own_stream(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """While a summary streams, counts are estimates at once (no tokenize sent) and the counter says
    "estimated"; once the stream is over, counts are exact again."""
    model = await open_fake_model(nursery, FakeModel(behaviour="echo", gen_rate=4.0))
    async with open_llm_client(LLMSettings(model.base_url)) as client:
        counter = TokenCounter(TokenModelRef(TokenModel.cold()), client)
        counter.set_model(model.model_id, exact=True)
        finished = await _summary_streaming(nursery, client)
        assert client.streaming == 1
        started = trio.current_time()
        assert await counter.count(CSV) == TokenModel.cold().estimate(CSV)
        assert (trio.current_time(), counter.round_trips) == (started, 0)
        assert counter.describe().startswith("estimated") and counter.estimating_now
        assert (await counter.fit_marked(300, lambda room, _: _lines(room), lambda answer: answer)).exact is False
        await finished.wait()
        assert await counter.count(CSV) == true_tokens(CSV) and counter.round_trips == 1
        assert (await counter.fit_marked(300, lambda room, _: _lines(room), lambda answer: answer)).exact is True
        assert counter.describe().startswith("exact") and not counter.estimating_now


async def test_the_counter_says_estimated_while_a_stream_runs_before_any_count(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """An exact counter whose last count was exact says "estimated" (never "exact") as soon as a
    summary streams, since the next count cannot be exact in time; "exact" again when it ends."""
    model = await open_fake_model(nursery, FakeModel(behaviour="echo", gen_rate=4.0))
    async with open_llm_client(LLMSettings(model.base_url)) as client:
        counter = TokenCounter(TokenModelRef(TokenModel.cold()), client)
        counter.set_model(model.model_id, exact=True)
        assert await counter.count(CSV) == true_tokens(CSV)
        assert counter.describe().startswith("exact")
        finished = await _summary_streaming(nursery, client)
        assert counter.describe().startswith("estimated") and "streaming" in (counter.estimating_now or "")
        assert "exact" not in counter.describe()
        await finished.wait()
        assert counter.describe().startswith("exact") and not counter.estimating_now


async def test_all_the_counting_of_one_answer_shares_one_deadline(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """A tokenizer that takes 2 s per count: the final check of one answer counts for at most
    read_timeout_s in all (it used to wait that long per repack), then the estimate stands in,
    and the next answers do not ask again during the cool-off."""
    server = await open_fake_openai(nursery, FakeServer(tokenize="llamacpp", delay_s=2.0))
    async with open_llm_client(LLMSettings(server.base_url)) as client:
        counter = TokenCounter(TokenModelRef(TokenModel.flat(0.27)), client, read_timeout_s=3.0)
        counter.set_model("fake-model-7b", exact=True)
        started = trio.current_time()
        text, tokens = await counter.fit(500, _lines, lambda answer: answer)
        assert trio.current_time() - started <= 3.0 + 1e-6
        assert tokens <= 500 and counter.estimating_now is not None
        asked = counter.round_trips
        started = trio.current_time()
        await counter.fit(400, _lines, lambda answer: answer)
        assert trio.current_time() == started and counter.round_trips == asked
