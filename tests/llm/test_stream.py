"""Streamed chat completions: assembled token by token, closed when nobody waits, slow vs hung."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import httpx
import pytest
import trio
import trio.testing

from ctxtrio._errors import LLMResponseError, LLMTimeoutError
from ctxtrio.llm._json import whole_characters
from ctxtrio.llm._sse import StreamedAnswer
from ctxtrio.llm._wire import parse_completion
from ctxtrio.llm.breaker import BreakerState
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.messages import ChatMessage, LLMSettings

from .fake_stream import FakeModel, open_fake_model

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

ASK = [ChatMessage("user", "Summarize the text below.\n\nPort 8003 stays open for 9 days.")]


async def test_stream_is_assembled_and_requested(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    """The body asks for a stream with usage; the answer is the deltas joined, with usage."""
    model = await open_fake_model(nursery, FakeModel())
    async with open_llm_client(LLMSettings(model.base_url)) as client:
        completion = await client.complete(ASK, max_tokens=200)
    assert completion.text.startswith("In short: Port 8003 stays open") and "8003" in completion.text
    assert completion.completion_tokens == model.served[0].planned and completion.prompt_tokens
    assert completion.finish_reason == "stop"
    assert model.served[0].stream


async def test_cancelled_stream_stops_generation(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    """A caller that gives up mid-answer closes the stream; the server generates nothing more."""
    model = await open_fake_model(nursery, FakeModel(behaviour="echo", gen_rate=16.0))
    text = "word " * 200  # 4.4 s of prompt, then 200 tokens in 12.5 s
    async with open_llm_client(LLMSettings(model.base_url)) as client:
        with trio.move_on_after(8.0):
            await client.complete([ChatMessage("user", text)], max_tokens=1000)
    await trio.sleep(20.0)
    served = model.served[0]
    assert served.gone_at is not None and served.finished_at is not None
    assert served.generated < served.planned
    # The first write after the close may still land in the socket buffer; the next fails.
    assert served.generated_after_gone <= 2 and served.finished_at - served.gone_at < 0.5
    assert model.generating == 0


async def test_the_fake_keeps_generating_a_non_streamed_answer(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """The fake models llama.cpp: a non-streamed request is generated to the end for nobody."""
    model = await open_fake_model(nursery, FakeModel(behaviour="echo", gen_rate=16.0))
    body = {"messages": [{"role": "user", "content": "word " * 100}], "max_tokens": 100, "stream": False}
    async with httpx.AsyncClient(timeout=None) as http:
        with trio.move_on_after(4.0):  # 2.3 s of prompt, then 100 tokens in 6.25 s
            await http.post(f"{model.base_url}/chat/completions", json=body)
    await trio.sleep(20.0)
    served = model.served[0]
    assert served.gone_at is not None and served.generated == served.planned == 100
    assert served.generated_after_gone > 50


async def test_abort_if_closes_the_stream_early(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    """A reason from abort_if ends the answer early ("aborted"), stops the generation, keeps the breaker closed."""
    model = await open_fake_model(nursery, FakeModel(behaviour="echo"))
    prompt = [ChatMessage("user", "Summarize the text below. " + "alpha beta gamma " * 300)]

    def echoing(answer: str) -> str | None:
        return "echoes the prompt" if answer.startswith("Summarize the text") else None

    async with open_llm_client(LLMSettings(model.base_url)) as client:
        completion = await client.complete(prompt, max_tokens=900, abort_if=echoing)
        assert completion.finish_reason == "aborted" and completion.text.startswith("Summarize the text")
        assert client.breaker_state is BreakerState.CLOSED
    await trio.sleep(5.0)
    assert model.served[0].generated < 10 and model.generating == 0


async def test_slow_stream_cut_by_its_caller_keeps_the_breaker_closed(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """Tokens arriving mean slow, not hung: cutting such a request after 20 s is no failure."""
    model = await open_fake_model(nursery, FakeModel(behaviour="echo", gen_rate=4.0))
    async with open_llm_client(LLMSettings(model.base_url)) as client:
        with trio.move_on_after(20.0):
            await client.complete([ChatMessage("user", "word " * 500)], max_tokens=500)
        assert client.breaker_state is BreakerState.CLOSED


async def test_silent_server_cut_by_its_caller_opens_the_breaker(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """No token in 20 s (stuck before the first one) is a hang: the breaker opens."""
    model = await open_fake_model(nursery, FakeModel(prompt_rate=0.01))
    async with open_llm_client(LLMSettings(model.base_url)) as client:
        with trio.move_on_after(20.0):
            await client.complete(ASK, max_tokens=50)
        assert client.breaker_state is BreakerState.OPEN


def _sse_transport(lines: list[str], *, then_hang: bool) -> httpx.MockTransport:
    class Body(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            for line in lines:
                yield (line + "\n\n").encode()
            if then_hang:
                await trio.sleep_forever()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    return httpx.MockTransport(handler)


def _delta(text: str) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]})


async def test_a_stream_that_stalls_times_out_after_stall_s(autojump_clock: trio.testing.MockClock) -> None:
    """Two tokens, then silence: LLMTimeoutError exactly stall_s after the last token."""
    transport = _sse_transport([_delta("a"), _delta(" b")], then_hang=True)
    settings = LLMSettings("http://llm/v1", timeout_s=100.0, stall_s=7.0)
    async with open_llm_client(settings, transport=transport) as client:
        with pytest.raises(LLMTimeoutError, match=r"silent for 7 s after 2 chunks"):
            await client.complete(ASK, max_tokens=5)
        assert trio.current_time() == 7.0
        assert client.breaker_state is BreakerState.OPEN


async def test_error_chunk_and_empty_stream_are_response_errors(autojump_clock: trio.testing.MockClock) -> None:
    """A mid-stream error object, or a finished stream with no content, raise LLMResponseError."""
    error = 'data: {"error": {"message": "context exceeded"}}'
    stopped = 'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}'
    for lines, message in (([_delta("a"), error], "context exceeded"), ([stopped, "data: [DONE]"], "empty content")):
        async with open_llm_client(LLMSettings("http://llm/v1"), transport=_sse_transport(lines, then_hang=False)) as c:
            with pytest.raises(LLMResponseError, match=message):
                await c.complete(ASK, max_tokens=5)


def test_a_character_sent_as_two_halves_is_whole_and_a_half_alone_is_replaced() -> None:
    """A server whose strings are UTF-16 (JavaScript's) may send a character beyond U+FFFF as its two
    surrogate escapes in two chunks, or a half alone: the text is the character, or U+FFFD for a half, and
    has a UTF-8 form, so a summary holding it can be stored (joined as sent, it had none)."""
    answer = StreamedAnswer()
    for line in (
        'data: {"choices": [{"delta": {"content": "ok \\ud83d"}}]}',
        'data: {"choices": [{"delta": {"content": "\\ude00 done \\ud800"}}]}',
    ):
        assert answer.feed(line)
    assert answer.text == "ok \U0001f600 done \ufffd"
    answer.text.encode("utf-8")
    body = b'{"choices": [{"message": {"content": "x \\ud83d\\ude00 \\udc00"}}]}'
    completion = parse_completion(httpx.Response(200, content=body), require_content=True)
    assert completion.text == "x \U0001f600 \ufffd"
    assert whole_characters("plain text") == "plain text"


def test_sse_lines_keep_text_usage_and_reason() -> None:
    """Comments and blank lines carry nothing; deltas join; usage and finish_reason are kept."""
    answer = StreamedAnswer()
    lines = [
        ": ping",
        "",
        _delta("Hello"),
        _delta(" world"),
        'data: {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 2}}',
        'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}',
        "data: [DONE]",
    ]
    tokens = [answer.feed(line) for line in lines]
    assert tokens == [False, False, True, True, False, False, False]
    assert (answer.text, answer.prompt_tokens, answer.completion_tokens) == ("Hello world", 12, 2)
    assert answer.finish_reason == "length" and answer.done
