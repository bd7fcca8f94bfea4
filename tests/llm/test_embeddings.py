"""Embeddings: the documented request and answer, prefixes per model family, the query cache, the breaker."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import httpx
import pytest
import trio
import trio.testing

from ctxtrio._errors import LLMResponseError, LLMUnavailableError
from ctxtrio.llm._wire import InputRefusedError
from ctxtrio.llm.breaker import BreakerState
from ctxtrio.llm.client import EMBED_PROBE, open_llm_client
from ctxtrio.llm.embeddings import Embedder, prefixes_for
from ctxtrio.llm.messages import LLMSettings
from testkit.fake_embeddings import FakeEmbeddings

BASE = "http://embed.test/v1"


async def test_request_shape_and_answer_order() -> None:
    """One POST {base}/embeddings with model, input list and float encoding; vectors come back by index, normalised."""
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append({"url": str(request.url), **json.loads(request.content)})
        data = [
            {"object": "embedding", "index": 1, "embedding": [0, 2]},
            {"object": "embedding", "index": 0, "embedding": [3, 4]},
        ]
        return httpx.Response(200, json={"object": "list", "data": data, "model": "m", "usage": {"prompt_tokens": 2}})

    async with open_llm_client(LLMSettings(BASE, model="m"), transport=httpx.MockTransport(handler)) as client:
        embedder = Embedder(client, "m")
        vectors = await embedder.documents(["first", "second"])
    assert seen == [
        {"url": f"{BASE}/embeddings", "input": ["first", "second"], "encoding_format": "float", "model": "m"}
    ]
    assert vectors == [[0.6, 0.8], [0.0, 1.0]]
    assert embedder.dimension == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"data": [{"embedding": [1.0]}]}, "expected 2 vectors"),
        ({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]}, "differ in length"),
        ({"data": [{"embedding": "AAAA"}, {"embedding": [1.0]}]}, "no list of numbers"),
        ({"error": {"message": "model not loaded"}}, "model not loaded"),
    ],
)
async def test_odd_answers_are_response_errors(body: object, message: str) -> None:
    """A count, length or type the request did not ask for is an LLMResponseError naming it."""
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=body))
    async with open_llm_client(LLMSettings(BASE), transport=transport) as client:
        with pytest.raises(LLMResponseError, match=message):
            await client.embed(["a", "b"])


def test_prefixes_follow_the_model_family() -> None:
    """nomic, e5 and bge-style models get their documented prefixes; MiniLM gets none."""
    assert prefixes_for("nomic-embed-text:latest").query == "search_query: "
    assert prefixes_for("nomic-embed-text-v1.5").document == "search_document: "
    assert (prefixes_for("intfloat/multilingual-e5-small").query, prefixes_for("e5-base-v2").document) == (
        "query: ",
        "passage: ",
    )
    assert prefixes_for("bge-small-en-v1.5").query.startswith("Represent this sentence")
    assert prefixes_for("all-MiniLM-L6-v2").query == prefixes_for("all-minilm").document == ""


async def test_queries_are_prefixed_and_cached_briefly(autojump_clock: trio.testing.MockClock) -> None:
    """A query is embedded once with its prefix, reused within the TTL, and asked again after it."""
    fake = FakeEmbeddings(model="nomic-embed-text")
    async with open_llm_client(LLMSettings(BASE, model=fake.model), transport=fake.transport()) as client:
        embedder = Embedder(client, fake.model, query_ttl_s=60.0)
        first = await embedder.query("sorted insert")
        await trio.sleep(59)
        assert await embedder.query("sorted insert") == first
        assert fake.embedded == ["search_query: sorted insert"]
        await trio.sleep(2)
        await embedder.query("sorted insert")
        await embedder.documents(["text"])
    assert fake.embedded == ["search_query: sorted insert"] * 2 + ["search_document: text"]
    assert math.isclose(sum(x * x for x in first), 1.0)


async def test_a_dead_endpoint_opens_the_breaker(autojump_clock: trio.testing.MockClock) -> None:
    """Refused: LLMUnavailableError, the breaker opens, and the next call fails at once without a request."""
    fake = FakeEmbeddings(down=True)
    async with open_llm_client(LLMSettings(BASE), transport=fake.transport()) as client:
        embedder = Embedder(client, fake.model)
        with pytest.raises(LLMUnavailableError, match="cannot connect"):
            await embedder.documents(["a"])
        assert embedder.breaker_state is BreakerState.OPEN and "cannot connect" in str(embedder.last_error)
        fake.down = False
        with pytest.raises(LLMUnavailableError, match="breaker open"):
            await embedder.query("a")
        assert fake.requests == []
        await trio.sleep(2)
        await embedder.query("a")
        assert (str(embedder.breaker_state), embedder.last_error) == ("closed", None)


async def test_an_input_refused_leaves_the_breaker_closed(autojump_clock: trio.testing.MockClock) -> None:
    """HTTP 400 for one input is an answer (the next request goes out at once); a 500 to every input opens the breaker."""
    fake = FakeEmbeddings(refuse={"huge"})
    async with open_llm_client(LLMSettings(BASE), transport=fake.transport()) as client:
        embedder = Embedder(client, fake.model)
        with pytest.raises(LLMResponseError, match="HTTP 400: This model's maximum context length"):
            await embedder.documents(["fine", "huge text"])
        assert embedder.breaker_state is BreakerState.CLOSED
        assert len(await embedder.documents(["fine"])) == 1
    assert (fake.refusals, fake.requests) == ([["fine", "huge text"]], [["fine"]])

    transport = httpx.MockTransport(lambda request: httpx.Response(500, json={"error": {"message": "crashed"}}))
    async with open_llm_client(LLMSettings(BASE), transport=transport) as client:
        embedder = Embedder(client, fake.model)
        with pytest.raises(LLMResponseError, match="HTTP 500") as failed:
            await embedder.documents(["fine"])
        assert embedder.breaker_state is BreakerState.OPEN
    assert not isinstance(failed.value, InputRefusedError)


async def test_an_input_too_large_for_llama_server_leaves_the_breaker_closed(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """llama-server's HTTP 500 for an input longer than its batch, while a one-word input is embedded: refused, no failure."""
    fake = FakeEmbeddings(ubatch_tokens=512)
    long = "漢" * 520  # one token a character for a BERT model: 522 with [CLS] and [SEP]
    async with open_llm_client(LLMSettings(BASE), transport=fake.transport()) as client:
        embedder = Embedder(client, fake.model)
        with pytest.raises(
            InputRefusedError, match=r"HTTP 500: input \(522 tokens\) is too large to process"
        ) as refused:
            await embedder.documents(["fine", long])
        assert "a one-word input is embedded" in str(refused.value)
        assert embedder.breaker_state is BreakerState.CLOSED
        assert len(await embedder.documents(["fine"])) == 1
        assert autojump_clock.current_time() == 0  # (no cooldown waited)
    assert (fake.refusals, fake.requests) == ([["fine", long]] * 2, [[EMBED_PROBE], ["fine"]])


async def test_a_server_error_of_a_moment_is_not_an_input_refused(autojump_clock: trio.testing.MockClock) -> None:
    """HTTP 500 once (a server busy or restarting), then every request answered: the one word, then the same
    texts sent again, embedded. The first 500 alone made the texts refused, and an entry sent alone refused for good."""
    fake = FakeEmbeddings()
    seen: list[list[str]] = []

    async def handle(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content)["input"])
        if len(seen) == 1:
            return httpx.Response(500, json={"error": {"code": 500, "message": "busy", "type": "server_error"}})
        return await fake.transport().handle_async_request(request)

    async with open_llm_client(LLMSettings(BASE), transport=httpx.MockTransport(handle)) as client:
        vectors = await client.embed(["fine", "text"])
        assert client.breaker_state is BreakerState.CLOSED
    assert len(vectors) == 2 and fake.embedded == [EMBED_PROBE, "fine", "text"]
    assert seen == [["fine", "text"], [EMBED_PROBE], ["fine", "text"]]


@dataclass
class Answers:
    """An embeddings endpoint answering ``status`` to every request, or refusing to connect once ``down``."""

    status: int
    down: bool = False
    seen: list[list[str]] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(json.loads(request.content)["input"])
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(self.status, json={"error": {"code": self.status, "message": "boom", "type": "x"}})


@pytest.mark.parametrize(("status", "requests"), [(500, 2), (502, 1), (503, 1), (504, 1)])
async def test_a_server_error_to_the_probe_too_opens_the_breaker(
    autojump_clock: trio.testing.MockClock, status: int, requests: int
) -> None:
    """A 500 whose one-word probe fails too is the server's failure; 502-504 (a model loading, no upstream) are, unprobed."""
    answers = Answers(status)
    async with open_llm_client(LLMSettings(BASE), transport=httpx.MockTransport(answers.handle)) as client:
        with pytest.raises(LLMResponseError, match=f"HTTP {status}: boom") as failed:
            await client.embed(["fine", "text"])
        assert client.breaker_state is BreakerState.OPEN
    assert not isinstance(failed.value, InputRefusedError)
    assert answers.seen == [["fine", "text"], [EMBED_PROBE]][:requests]


async def test_a_server_error_then_no_connection_opens_the_breaker(autojump_clock: trio.testing.MockClock) -> None:
    """HTTP 500, then the one-word probe cannot connect: the endpoint went down, not an input refused."""
    answers = Answers(500)

    def handle(request: httpx.Request) -> httpx.Response:
        answers.down = bool(answers.seen)  # the probe, after the first request
        return answers.handle(request)

    async with open_llm_client(LLMSettings(BASE), transport=httpx.MockTransport(handle)) as client:
        with pytest.raises(LLMResponseError, match="a one-word input failed too: .*cannot connect") as failed:
            await client.embed(["fine"])
        assert client.breaker_state is BreakerState.OPEN
    assert not isinstance(failed.value, InputRefusedError)
