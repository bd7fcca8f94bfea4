"""Streams a llama-cpp-python server cuts off for another request: retried, never kept, no breaker."""

from __future__ import annotations

import socket
import time

import pytest
import trio
import trio.testing

from ctxtrio._errors import LLMInterruptedError
from ctxtrio.llm.breaker import BreakerState
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.messages import ChatMessage, LLMSettings
from ctxtrio.llm.summarizer import Summarizer
from ctxtrio.text.tokens import TokenModel, TokenModelRef

from .fake_stream import FakeModel, Served, open_fake_model
from .test_summarizer import DictCache, document

ASK = [ChatMessage("user", "Summarize the text below.\n\n" + "Port 8003 stays open for 9 days. " * 20)]


@pytest.mark.parametrize("what", ["prompt evaluation", "generation"])
async def test_a_cut_off_stream_is_interrupted_not_a_failure(
    nursery: trio.Nursery, clock: trio.testing.MockClock, what: str
) -> None:
    """Another request during prompt evaluation (no content at all) or mid-answer (truncated):
    LLMInterruptedError, and the breaker stays closed."""
    model = await open_fake_model(nursery, FakeModel(interrupt_requests=True, behaviour="echo"))
    nursery.start_soon(cut_in_evaluation if what == "prompt evaluation" else cut_in, model, 1)
    async with open_llm_client(LLMSettings(model.base_url)) as client:
        with pytest.raises(LLMInterruptedError, match="without a finish reason") as raised:
            await client.complete(ASK, max_tokens=500)  # about 3.5 s of prompt, then 9 s of answer
        assert client.breaker_state is BreakerState.CLOSED, what
    assert model.interrupted == 1 and model.served[0].generated < model.served[0].planned
    assert ("after 1 chunk (0 characters)" in str(raised.value)) == (what == "prompt evaluation")


async def test_a_summary_interrupted_by_a_second_client_goes_on_and_keeps_only_whole_answers(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """A second client hits the server mid-summary, three times: each cut-off step is asked
    again, the summary is the LLM's, the breaker stays closed, and every cached text is a
    whole answer (the fake's answers end with a full stop; truncated ones do not)."""
    model = await open_fake_model(nursery, FakeModel(interrupt_requests=True, tokens_per_event=2))
    nursery.start_soon(cut_in, model, 3)
    cache = DictCache()
    async with open_llm_client(LLMSettings(model.base_url, timeout_s=120.0)) as client:
        summarizer = Summarizer(client, TokenModelRef(TokenModel.cold()), context_tokens=lambda: 4096)
        summary = await summarizer.summarize(document(300), target_tokens=200, cache=cache)
        assert client.breaker_state is BreakerState.CLOSED
    assert model.interrupted == 3
    assert summary.method == "llm", summary.note
    assert cache.entries and all(text.endswith(".") for text in cache.entries.values())


async def test_a_one_liner_given_up_after_four_cut_offs_says_so(
    nursery: trio.Nursery, clock: trio.testing.MockClock
) -> None:
    """Every try of a one-liner is cut off by another client: after four the line is extractive,
    and its note names the interrupts, not a deadline that never passed."""
    model = await open_fake_model(nursery, FakeModel(interrupt_requests=True, tokens_per_event=2))
    nursery.start_soon(cut_in, model, 4)
    async with open_llm_client(LLMSettings(model.base_url, timeout_s=120.0)) as client:
        summarizer = Summarizer(client, TokenModelRef(TokenModel.cold()), context_tokens=lambda: 4096)
        [line] = await summarizer.one_liners([document(10)], cache=DictCache())
        assert client.breaker_state is BreakerState.CLOSED
    assert model.interrupted == 4
    assert line.method == "extractive"
    assert line.note == "the server cut the answer off 4 times to serve other requests; extractive — call again"


async def cut_in(model: FakeModel, times: int) -> None:
    """Another program posts a tokenize while one of our streams is mid-answer, ``times`` times, a
    different stream each time (llama-cpp-python then cuts that stream at its next chunk).

    Timed by the fake's events, not by the clock: the request goes out from a worker thread
    that returns only once the fake counts it as waiting for the model, and the held clock
    does not move while a worker thread runs. So the cut falls mid-answer however long
    loopback I/O takes on a loaded machine (at absolute virtual times, a stream could end
    before a slow request arrived: ``interrupted`` was 1 instead of >= 2, 1 run in 3).
    """
    cut: list[Served] = []
    async with trio.open_nursery() as replies:
        while len(cut) < times:
            await model.next_event()
            live = [s for s in model.served if s.stream and s.finished_at is None and all(s is not c for c in cut)]
            if live:
                cut.append(live[0])
                sock = await trio.to_thread.run_sync(_post_tokenize_until_waiting, model)
                replies.start_soon(_read_to_the_end, trio.SocketStream(trio.socket.from_stdlib_socket(sock)))


async def cut_in_evaluation(model: FakeModel, times: int) -> None:
    """Like :func:`cut_in`, while a stream's prompt is being evaluated (before any token): polled
    every 0.1 s of virtual time, well inside the fake's 3.5 s of evaluation."""
    cut: list[Served] = []
    async with trio.open_nursery() as replies:
        while len(cut) < times:
            await trio.sleep(0.1)
            live = [s for s in model.served if s.stream and not s.generated and all(s is not c for c in cut)]
            if live:
                cut.append(live[0])
                sock = await trio.to_thread.run_sync(_post_tokenize_until_waiting, model)
                replies.start_soon(_read_to_the_end, trio.SocketStream(trio.socket.from_stdlib_socket(sock)))


def _post_tokenize_until_waiting(model: FakeModel) -> socket.socket:
    """Send ``POST /extras/tokenize`` and return once ``model`` has it waiting for the model lock."""
    host, port = model.base_url.removeprefix("http://").removesuffix("/v1").split(":")
    before = model.waiting
    sock = socket.create_connection((host, int(port)))
    body = b'{"input": "hello"}'
    head = f"POST /extras/tokenize HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n\r\n"
    sock.sendall(head.encode() + body)
    for _ in range(30_000):  # a guard against a hang (30 s of real time), not a timing
        if model.waiting > before:
            return sock
        time.sleep(0.001)
    raise AssertionError("the fake never saw the other client's request")


async def _read_to_the_end(stream: trio.SocketStream) -> None:
    async with stream:
        while await stream.receive_some(65536):
            pass
