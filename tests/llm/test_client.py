"""The LLM client: request shape, error translation, deadlines and the one-at-a-time queue."""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING

import httpx
import pytest
import trio
import trio.testing

from ctxtrio._errors import LLMResponseError, LLMTimeoutError, LLMUnavailableError
from ctxtrio.llm.breaker import BreakerState
from ctxtrio.llm.client import LLMClient, open_llm_client
from ctxtrio.llm.messages import ChatMessage, LLMSettings
from testkit.fake_openai import (
    ContextStyle,
    FakeServer,
    Mode,
    TokenizeStyle,
    closed_port_url,
    open_fake_openai,
    true_tokens,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

HELLO = [ChatMessage("user", "hello")]
TEXT = "Tokenize me: {x} 한국어 中文 テキスト."
OK_BODY = {"choices": [{"message": {"content": " fine "}}], "usage": {"prompt_tokens": 9}}


async def _served(nursery: trio.Nursery, server: FakeServer) -> tuple[FakeServer, LLMSettings]:
    await open_fake_openai(nursery, server)
    return server, LLMSettings(server.base_url, timeout_s=5.0)


@pytest.fixture
async def fake(nursery: trio.Nursery) -> AsyncIterator[tuple[FakeServer, LLMClient]]:
    server, settings = await _served(nursery, FakeServer())
    async with open_llm_client(settings) as client:
        yield server, client


def _recording(body: object = OK_BODY, status: int = 200) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json=body)

    return httpx.MockTransport(handler), seen


async def test_body_omits_an_empty_model_and_sends_no_auth() -> None:
    """With model "" the body has no "model" key and no Authorization header is sent."""
    transport, seen = _recording()
    async with open_llm_client(LLMSettings("http://llm/v1/"), transport=transport) as client:
        completion = await client.complete(HELLO, max_tokens=7)
    assert completion.text == "fine" and completion.prompt_tokens == 9
    assert completion.completion_tokens is None
    assert str(seen[0].url) == "http://llm/v1/chat/completions"
    body = json.loads(seen[0].content)
    assert "model" not in body
    assert body["max_tokens"] == 7 and body["messages"] == [{"role": "user", "content": "hello"}]
    assert "authorization" not in seen[0].headers


async def test_body_names_the_model_and_sends_the_bearer_key() -> None:
    """A configured model goes into the body; an API key becomes an Authorization: Bearer header."""
    transport, seen = _recording()
    settings = LLMSettings("http://llm/v1", model="qwen3-8b", api_key="sk-test")
    async with open_llm_client(settings, transport=transport) as client:
        await client.complete(HELLO, max_tokens=7)
    assert json.loads(seen[0].content)["model"] == "qwen3-8b"
    assert seen[0].headers["authorization"] == "Bearer sk-test"


async def test_refused_connection_is_unavailable() -> None:
    """Nothing listening on the port → LLMUnavailableError."""
    async with open_llm_client(LLMSettings(closed_port_url(), timeout_s=5.0)) as client:
        with pytest.raises(LLMUnavailableError, match="cannot connect"):
            await client.complete(HELLO, max_tokens=5)


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("http500", "HTTP 500: Internal Server Error"),
        ("garbage", "not a JSON object"),
        ("error_body", "error body: model crashed"),
        ("empty_content", "empty content"),
    ],
)
async def test_unusable_answers_are_response_errors(nursery: trio.Nursery, mode: Mode, message: str) -> None:
    """5xx, non-JSON, an {"error": ...} body and empty content each raise LLMResponseError."""
    _, settings = await _served(nursery, FakeServer(mode=mode))
    async with open_llm_client(settings) as client:
        with pytest.raises(LLMResponseError, match=message):
            await client.complete(HELLO, max_tokens=5)


async def test_hanging_server_times_out_after_timeout_s(nursery: trio.Nursery) -> None:
    """A server that never answers → LLMTimeoutError once timeout_s (a trio deadline) has passed."""
    server, _ = await _served(nursery, FakeServer(mode="hang"))
    start = trio.current_time()
    async with open_llm_client(LLMSettings(server.base_url, timeout_s=0.3)) as client:
        with pytest.raises(LLMTimeoutError, match=r"no answer within 0\.3 s"):
            await client.complete(HELLO, max_tokens=5)
    assert 0.3 <= trio.current_time() - start < 2.0


async def test_slow_but_fine_server_answers(nursery: trio.Nursery) -> None:
    """An answer that comes within timeout_s is fine, however slow."""
    server, _ = await _served(nursery, FakeServer(delay_s=0.2))
    async with open_llm_client(LLMSettings(server.base_url, timeout_s=2.0)) as client:
        assert (await client.complete(HELLO, max_tokens=5)).text == "Summary of 5 characters."


async def _hang(request: httpx.Request) -> httpx.Response:
    """A server that never answers."""
    await trio.sleep_forever()
    raise AssertionError("unreachable")


async def test_timeout_is_exact_in_virtual_time(autojump_clock: trio.testing.MockClock) -> None:
    """The per-request deadline fires at exactly timeout_s."""
    settings = LLMSettings("http://llm/v1", timeout_s=7.0)
    async with open_llm_client(settings, transport=httpx.MockTransport(_hang)) as client:
        with pytest.raises(LLMTimeoutError):
            await client.complete(HELLO, max_tokens=5)
        assert trio.current_time() == 7.0


async def test_models_tokenize_and_context_from_the_fake(
    fake: tuple[FakeServer, LLMClient],
) -> None:
    """list_models, loaded_model, tokenize and context_length read the llama.cpp-style fake."""
    server, client = fake
    assert await client.list_models() == ["fake-model-7b"]
    assert await client.loaded_model() == "fake-model-7b"
    assert await client.tokenize(TEXT) == true_tokens(TEXT)
    assert await client.context_length("fake-model-7b") == 8192
    server.tokenize = None
    assert await client.tokenize(TEXT) is None


async def test_the_loaded_model_is_a_language_model_when_an_embedding_model_is_listed_first(
    nursery: trio.Nursery,
) -> None:
    """Unconfigured, the client calibrates and summarizes with the first language model the server lists,
    not an embedding model listed before it (a summary asked of it fails; its tokenizer is another's)."""
    listed = FakeServer(model_id="gemma-3-270m-it", listed_first=("text-embedding-nomic-embed-text-v1.5",))
    _, settings = await _served(nursery, listed)
    async with open_llm_client(settings) as client:
        assert await client.list_models() == ["text-embedding-nomic-embed-text-v1.5", "gemma-3-270m-it"]
        assert await client.loaded_model() == "gemma-3-270m-it"


@pytest.mark.parametrize("style", ["lmstudio", "llamacpp", "vllm", "ollama"])
async def test_context_length_of_each_server_style(nursery: trio.Nursery, style: ContextStyle) -> None:
    """LM Studio's loaded_context_length, llama.cpp's n_ctx, vLLM's max_model_len and Ollama's are all found."""
    _, settings = await _served(nursery, FakeServer(context_style=style, n_ctx=12288))
    async with open_llm_client(settings) as client:
        assert await client.context_length("fake-model-7b") == 12288


async def test_context_length_is_none_when_no_endpoint_tells(nursery: trio.Nursery) -> None:
    """A server without any known context endpoint yields None, not an error."""
    _, settings = await _served(nursery, FakeServer(context_style=None))
    async with open_llm_client(settings) as client:
        assert await client.context_length("fake-model-7b") is None


async def test_extras_tokenize_style(nursery: trio.Nursery) -> None:
    """llama-cpp-python's {root}/extras/tokenize (not under /v1) is asked first and remembered (its BOS included)."""
    server, settings = await _served(nursery, FakeServer(tokenize="extras"))
    async with open_llm_client(settings) as client:
        assert await client.tokenize(TEXT) == 1 + true_tokens(TEXT)
        assert await client.tokenize(TEXT) == 1 + true_tokens(TEXT)
    tokenize_calls = [path for _, path in server.requests if path.endswith("tokenize")]
    assert tokenize_calls == ["/extras/tokenize", "/extras/tokenize"]


@pytest.mark.parametrize("style", ["llamacpp", "vllm"])
async def test_root_tokenize_style(nursery: trio.Nursery, style: TokenizeStyle) -> None:
    """llama.cpp's and vLLM's POST {root}/tokenize are used after /extras/tokenize answers 404, then first."""
    server, settings = await _served(nursery, FakeServer(tokenize=style))
    async with open_llm_client(settings) as client:
        assert await client.tokenize(TEXT) == true_tokens(TEXT)
        assert await client.tokenize(TEXT) == true_tokens(TEXT)
    tokenize_calls = [path for _, path in server.requests if path.endswith("tokenize")]
    assert tokenize_calls == ["/extras/tokenize", "/tokenize", "/tokenize"]


async def test_open_breaker_fails_fast_without_a_request() -> None:
    """After a failure the next call is refused at once and never reaches the transport."""
    transport, seen = _recording(body={"error": "no"}, status=500)
    async with open_llm_client(LLMSettings("http://llm/v1"), transport=transport) as client:
        with pytest.raises(LLMResponseError):
            await client.complete(HELLO, max_tokens=5)
        with pytest.raises(LLMUnavailableError, match="breaker open"):
            await client.list_models()
    assert len(seen) == 1


def _slow_transport(duration_s: float) -> tuple[httpx.MockTransport, list[float]]:
    started: list[float] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        started.append(trio.current_time())
        await trio.sleep(duration_s)
        return httpx.Response(200, json=OK_BODY)

    return httpx.MockTransport(handler), started


async def test_calls_queue_one_at_a_time_and_honour_deadlines(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Calls wait their turn; a queued call whose caller's deadline passes leaves the queue unsent."""
    transport, started = _slow_transport(10.0)
    finished: dict[str, float] = {}
    async with open_llm_client(LLMSettings("http://llm/v1"), transport=transport) as client:

        async def call(name: str, deadline_s: float) -> None:
            with trio.move_on_after(deadline_s):
                await client.complete(HELLO, max_tokens=5)
            finished[name] = trio.current_time()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, "first", 100.0)
            await trio.sleep(0.5)
            nursery.start_soon(call, "impatient", 5.0)
            await trio.sleep(0.5)
            nursery.start_soon(call, "patient", 100.0)
    assert started == [0.0, 10.0]
    assert finished == {"first": 10.0, "impatient": 5.5, "patient": 20.0}


async def test_queued_calls_fail_fast_once_the_breaker_opens(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A call queued behind one that fails is refused when its turn comes, without a request."""
    sent: list[float] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        sent.append(trio.current_time())
        await trio.sleep(10.0)
        return httpx.Response(500, text="model crashed")

    outcomes: dict[str, tuple[str, float]] = {}
    settings = LLMSettings("http://llm/v1")
    async with open_llm_client(settings, transport=httpx.MockTransport(handler)) as client:

        async def call(name: str) -> None:
            try:
                await client.complete(HELLO, max_tokens=5)
            except (LLMResponseError, LLMUnavailableError) as exc:
                outcomes[name] = (type(exc).__name__, trio.current_time())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, "first")
            await trio.sleep(1.0)
            nursery.start_soon(call, "queued")
    assert sent == [0.0]
    assert outcomes == {
        "first": ("LLMResponseError", 10.0),
        "queued": ("LLMUnavailableError", 10.0),
    }


async def test_concurrency_setting_allows_parallel_calls(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """With concurrency=2 two calls run at once and a third waits for a free slot."""
    transport, started = _slow_transport(10.0)
    settings = LLMSettings("http://llm/v1", concurrency=2)
    async with open_llm_client(settings, transport=transport) as client:
        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(partial(client.complete, HELLO, max_tokens=5))
    assert started == [0.0, 0.0, 10.0]


async def test_abandoned_unanswered_request_opens_the_breaker(autojump_clock: trio.testing.MockClock) -> None:
    """A request cut by its caller's deadline after 5 s without an answer opens the breaker."""
    settings = LLMSettings("http://llm/v1", timeout_s=120.0)
    async with open_llm_client(settings, transport=httpx.MockTransport(_hang)) as client:
        with trio.move_on_after(1.0):
            await client.complete(HELLO, max_tokens=5)
        states = [client.breaker_state]  # cut early: no verdict
        with trio.move_on_after(6.0):
            await client.complete(HELLO, max_tokens=5)
        states.append(client.breaker_state)
        assert states == [BreakerState.CLOSED, BreakerState.OPEN]
        with pytest.raises(LLMUnavailableError):
            await client.complete(HELLO, max_tokens=5)  # fails fast, no 45 s wait
        assert trio.current_time() == 7.0


async def test_abandoning_a_slow_but_alive_server_is_no_verdict(autojump_clock: trio.testing.MockClock) -> None:
    """A server that answered just before is slow, not hung: a cut request leaves the breaker closed."""
    answers = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal answers
        await trio.sleep(10.0)
        answers += 1
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 3}})

    settings = LLMSettings("http://llm/v1", timeout_s=120.0)
    async with open_llm_client(settings, transport=httpx.MockTransport(handler)) as client:
        await client.complete(HELLO, max_tokens=5)  # answered at t=10
        with trio.move_on_after(6.0):
            await client.complete(HELLO, max_tokens=5)  # cut at t=16
        assert client.breaker_state is BreakerState.CLOSED
        assert (await client.complete(HELLO, max_tokens=5)).text == "ok"


async def test_probes_wait_probe_timeout_s_stretched_as_told(autojump_clock: trio.testing.MockClock) -> None:
    """A probe (list_models) times out at probe_timeout_s, not timeout_s; after stretch_probes(2), at twice that."""
    settings = LLMSettings("http://llm/v1", timeout_s=7.0, probe_timeout_s=3.0)
    async with open_llm_client(settings, transport=httpx.MockTransport(_hang)) as client:
        with pytest.raises(LLMTimeoutError, match=r"no answer within 3 s"):
            await client.list_models()
        assert trio.current_time() == 3.0
        await trio.sleep(2.0)  # past the breaker's first wait: the next request is its probe
        client.stretch_probes(2.0)
        with pytest.raises(LLMTimeoutError, match=r"no answer within 6 s"):
            await client.list_models()
        assert trio.current_time() == 11.0
