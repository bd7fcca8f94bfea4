"""The summarizer: verbatim, single pass, slices + merge, and every way it degrades."""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING

import httpx
import pytest
import trio
import trio.testing

from ctxtrio.llm import summarizer
from ctxtrio.llm._outcome import ONE_LINER_TOKENS
from ctxtrio.llm._slices import slice_text
from ctxtrio.llm.client import LLMClient, open_llm_client
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.llm.summarizer import Summarizer, cache_key
from ctxtrio.text.extractive import first_sentence
from ctxtrio.text.tokens import TokenModel, TokenModelRef
from testkit.clock import held_clock
from testkit.deadlines import until
from testkit.fake_openai import FakeServer, open_fake_openai

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

MODEL = TokenModel.cold()
Handler = Callable[[httpx.Request], httpx.Response] | Callable[[httpx.Request], Coroutine[None, None, httpx.Response]]


def document(sentences: int, start: int = 0) -> str:
    """Distinct sentences in paragraphs of ten, about 13 tokens each."""
    lines = [
        f"Step {i} configures node-{i} with limit {i * 7} and owner team{i % 5}."
        for i in range(start, start + sentences)
    ]
    return "\n\n".join(" ".join(lines[i : i + 10]) for i in range(0, len(lines), 10))


#: The threshold of the tests that count finished steps at a deadline: each step plans in a
#: worker thread, and at load 12 one took over 30 ms, so the clock jumped to the deadline
#: while a step was still planning (20 of 20 slices expected, 1 or 2 done; on be3c1d7 too).
_SLOW_THREADS_S = 0.25


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that jumps after 30 ms of real idleness, held still while a worker thread runs."""
    return held_clock(autojump_threshold=0.03)


class DictCache:
    """An in-memory SummaryCache."""

    def __init__(self) -> None:
        self.entries: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self.entries.get(key)

    async def put(self, key: str, text: str) -> None:
        self.entries[key] = text


class Scripted:
    """A MockTransport handler answering by prompt kind, after ``delay_s``; hangs after ``answers``."""

    def __init__(self, *, delay_s: float = 1.0, answers: float = math.inf) -> None:
        self.delay_s = delay_s
        self.answers = answers
        self.prompts: list[str] = []

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["messages"][-1]["content"]
        self.prompts.append(prompt)
        if len(self.prompts) > self.answers:
            await trio.sleep_forever()
        await trio.sleep(self.delay_s)
        return httpx.Response(200, json={"choices": [{"message": {"content": reply_to(prompt)}}]})


def reply_to(prompt: str) -> str:
    """A faithful short answer: its kind, then figures of the text it was given, last first."""
    text = prompt.split("TEXT:\n", 1)[-1].split("\nEND OF TEXT", 1)[0]
    figures = ", ".join(reversed(list(dict.fromkeys(re.findall(r"node-\d+|team\d+", text)))))
    part = re.search(r"part (\d+) of", prompt)
    if part:
        kind = f"Part {part.group(1)} summary"
    elif prompt.startswith("Below are summaries"):
        kind = "Merged summary"
    else:
        kind = "Single summary"
    return f"{kind}: {figures[:400]}."


def summarizer_for(client: LLMClient | None) -> Summarizer:
    """A Summarizer over the cold model."""
    return Summarizer(client, TokenModelRef(MODEL))


def mock_client(handler: Handler) -> AbstractAsyncContextManager[LLMClient]:
    """A client whose requests go to ``handler``."""
    return open_llm_client(LLMSettings("http://llm/v1"), transport=httpx.MockTransport(handler))


async def test_text_within_target_is_returned_verbatim() -> None:
    """Text already within the target comes back unchanged, without any request."""
    script = Scripted()
    async with mock_client(script) as client:
        summary = await summarizer_for(client).summarize("Short note.", target_tokens=50)
    assert (summary.text, summary.method, summary.note) == ("Short note.", "verbatim", "")
    assert script.prompts == []


async def test_medium_text_takes_one_llm_call(clock: trio.testing.MockClock) -> None:
    """Up to the single-pass limit one request is made, with the faithful-summary instructions."""
    script = Scripted()
    seen: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return await script(request)

    text = document(100)
    async with mock_client(handler) as client:
        summary = await summarizer_for(client).summarize(text, target_tokens=200)
    assert summary.text.startswith("Single summary: node-99") and summary.method == "llm"
    assert summary.note == ""
    assert len(script.prompts) == 1 and text in script.prompts[0]
    messages = json.loads(seen[0].content)["messages"]
    assert [m["role"] for m in messages] == ["user"]  # Gemma's template drops system messages
    assert "exactly as written" in messages[0]["content"] and "identifiers" in messages[0]["content"]


async def test_long_text_is_sliced_then_merged(clock: trio.testing.MockClock) -> None:
    """Beyond the single-pass limit: slices of at most 1,500 tokens in order, then one merge call."""
    script = Scripted()
    text = document(800)
    async with mock_client(script) as client:
        summary = await summarizer_for(client).summarize(text, target_tokens=400)
    slices = slice_text(text, max_tokens=1500, model=MODEL)
    assert len(slices) >= 4
    assert summary.text.startswith("Merged summary: ") and (summary.method, summary.note) == ("llm", "")
    assert len(script.prompts) == len(slices) + 1
    merge = script.prompts[-1]
    positions = [merge.index(f"Part {i} summary:") for i in range(1, len(slices) + 1)]
    assert positions == sorted(positions)


@pytest.mark.parametrize(
    ("content", "method"),
    [("<think>plan it</think>\nReal summary of node-1, node-2.", "llm"), ("<think>cut off mid-thought", "extractive")],
)
async def test_reasoning_is_removed_from_answers(content: str, method: str) -> None:
    """<think> blocks are dropped; an answer that is only (unfinished) reasoning counts as unusable."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    async with mock_client(handler) as client:
        summary = await summarizer_for(client).summarize(document(10), target_tokens=50)
    assert summary.method == method
    assert summary.text == "Real summary of node-1, node-2." if method == "llm" else "think" not in summary.text
    if method == "extractive":
        assert summary.note.startswith("LLM answer rejected (empty answer)")


async def test_open_breaker_gives_extractive_at_once(clock: trio.testing.MockClock) -> None:
    """After a failure the next summary is extractive immediately, saying the breaker is open."""
    calls: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(trio.current_time())
        return httpx.Response(500, text="oops")

    text = document(100)
    async with mock_client(handler) as client:
        summarizer = summarizer_for(client)
        first = await summarizer.summarize(text, target_tokens=200)
        second = await summarizer.summarize(text, target_tokens=200)
    assert first.method == "extractive" and first.note.startswith("LLM answer unusable (")
    assert second.method == "extractive"
    assert second.note == "LLM unavailable (breaker open after a failure); extractive"
    assert second.text and calls == [0.0] and trio.current_time() == 0.0


async def test_without_a_client_everything_is_extractive() -> None:
    """--no-llm: summaries and one-liners are extractive and say so."""
    summarizer = summarizer_for(None)
    summary = await summarizer.summarize(document(100), target_tokens=100)
    line = await summarizer.one_liner(document(10))
    assert (summary.method, summary.note) == ("extractive", "no LLM configured; extractive")
    assert summary.text and MODEL.estimate(summary.text) <= 100
    assert line.method == "extractive" and line.text.startswith("Step 0 configures node-0")


async def test_hanging_single_pass_returns_at_stop_at(clock: trio.testing.MockClock) -> None:
    """A server that never answers: the summary is extractive exactly at stop_at, with a note."""
    script = Scripted(answers=0)
    async with mock_client(script) as client:
        summarizer = summarizer_for(client)
        summary = await summarizer.summarize(document(100), target_tokens=200, wait=until(30.0))
    assert trio.current_time() == 30.0
    assert (summary.method, summary.note) == ("extractive", "deadline passed; extractive")
    async with mock_client(Scripted(answers=0)) as client:  # a fresh breaker
        cached = await summarizer_for(client).summarize(
            document(100), target_tokens=200, wait=until(60.0), cache=DictCache()
        )
    assert cached.note == "deadline passed; extractive — call again to continue (finished parts are kept)"


async def test_deadline_mid_slices_then_resume_from_cache(
    clock: trio.testing.MockClock,
) -> None:
    """Slices done before stop_at are kept and cached; the next call only asks for the rest."""
    clock.autojump_threshold = _SLOW_THREADS_S
    text = document(800)
    count = len(slice_text(text, max_tokens=1500, model=MODEL))
    cache = DictCache()
    hanging = Scripted(delay_s=5.0, answers=3)
    async with mock_client(hanging) as client:
        partial = await summarizer_for(client).summarize(text, target_tokens=400, wait=until(40.0), cache=cache)
    assert trio.current_time() == 40.0
    assert partial.method == "llm+extractive"
    assert partial.note == (
        f"deadline passed; 3 of {count} parts by the LLM, the rest extractive"
        " — call again to continue (finished parts are kept)"
    )
    assert len(cache.entries) == 3

    fast = Scripted()
    async with mock_client(fast) as client:
        done = await summarizer_for(client).summarize(text, target_tokens=400, cache=cache)
    assert done.text.startswith("Merged summary:") and done.method == "llm"
    assert [p for p in fast.prompts if "is part 1 of" in p] == []
    assert len(fast.prompts) == count - 3 + 1


async def test_llm_failure_mid_slices_finishes_extractively(clock: trio.testing.MockClock) -> None:
    """A 500 after two slices: the rest is extractive at once, and the note says what happened."""
    script = Scripted(delay_s=0.0)

    async def handler(request: httpx.Request) -> httpx.Response:
        if len(script.prompts) >= 2:
            return httpx.Response(500, text="CUDA out of memory")
        return await script(request)

    text = document(800)
    count = len(slice_text(text, max_tokens=1500, model=MODEL))
    async with mock_client(handler) as client:
        summary = await summarizer_for(client).summarize(text, target_tokens=400, cache=DictCache())
    assert summary.method == "llm+extractive"
    assert summary.note == (
        "LLM answer unusable (chat completion: HTTP 500: CUDA out of memory)"
        f"; 2 of {count} parts by the LLM, the rest extractive"
        " — call again to continue (finished parts are kept)"
    )
    assert MODEL.estimate(summary.text) <= 400


async def test_deadline_before_the_merge(clock: trio.testing.MockClock) -> None:
    """All slices done but the merge hangs: the slice summaries are merged extractively at stop_at."""
    clock.autojump_threshold = _SLOW_THREADS_S
    text = document(800)
    count = len(slice_text(text, max_tokens=1500, model=MODEL))
    script = Scripted(delay_s=1.0, answers=count)
    async with mock_client(script) as client:  # stop_at comes before the merge's first-token deadline (~89 s)
        summary = await summarizer_for(client).summarize(text, target_tokens=400, wait=until(60.0), cache=DictCache())
    assert trio.current_time() == 60.0
    assert summary.method == "llm+extractive"
    assert summary.note == (
        f"deadline passed; {count} of {count} parts by the LLM, the rest extractive"
        " — call again to continue (finished parts are kept)"
    )
    assert "Part 1 summary:" in summary.text


async def test_one_liner_is_cached_and_degrades_after_the_deadline(
    clock: trio.testing.MockClock,
) -> None:
    """one_liner asks once, then answers from the cache; past stop_at it is the first sentence."""
    script = Scripted()
    cache = DictCache()
    chunk = document(10)
    async with mock_client(script) as client:
        summarizer = summarizer_for(client)
        first = await summarizer.one_liner(chunk, cache=cache)
        again = await summarizer.one_liner(chunk, wait=until(0.0), cache=cache)
        late = await summarizer.one_liner(document(10, start=50), wait=until(0.0), cache=cache)
    assert first.text.startswith("Single summary: node-9") and first.method == "llm"
    assert (again.text, again.method) == (first.text, "llm")
    assert len(script.prompts) == 1
    assert late.method == "extractive" and late.text.startswith("Step 50 configures")
    assert late.note == ("deadline passed; extractive — call again to continue (done one-liners are cached)")


async def test_hanging_real_server_returns_by_stop_at(nursery: trio.Nursery) -> None:
    """Against the fake HTTP server that hangs, summarize returns soon after stop_at."""
    server = await open_fake_openai(nursery, FakeServer(mode="hang"))
    async with open_llm_client(LLMSettings(server.base_url, timeout_s=60.0)) as client:
        stop_at = trio.current_time() + 0.3
        summarizer = summarizer_for(client)
        summary = await summarizer.summarize(document(100), target_tokens=200, wait=until(stop_at))
    assert stop_at <= trio.current_time() < stop_at + 1.0
    assert summary.method == "extractive" and summary.note == "deadline passed; extractive"


def test_cache_key_depends_on_purpose_target_and_text() -> None:
    """Keys differ when any of purpose, target or text differs, and are stable otherwise."""
    base = cache_key("slice/v1", 100, "text")
    assert base == cache_key("slice/v1", 100, "text")
    assert len({base, cache_key("merge/v1", 100, "text"), cache_key("slice/v1", 101, "text"),
                cache_key("slice/v1", 100, "text!")}) == 4  # fmt: skip


def test_slices_stay_within_budget_and_keep_order() -> None:
    """Every slice is within max_tokens and the slices hold all sentences in order."""
    text = document(300) + "\n\n" + "x" * 20000
    slices = slice_text(text, max_tokens=500, model=MODEL)
    assert all(MODEL.estimate(piece) <= 500 for piece in slices)
    joined = " ".join(slices)
    steps = [int(n) for n in re.findall(r"Step (\d+) ", joined)]
    assert steps == list(range(300))
    assert joined.count("x") == 20000


async def test_the_first_sentences_an_outline_stands_on_are_taken_in_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An outline's stand-in lines (each chunk's first sentence: 40-60 ms of CPU for the 200 chunks of a default
    doc_outline, up to 500) are taken in a worker thread, not on the event loop every other call shares."""
    on_the_loop: list[bool] = []

    def recorded(text: str, *, max_tokens: int, model: TokenModel, past_code: bool = False) -> str:
        on_the_loop.append(threading.current_thread() is threading.main_thread())
        return first_sentence(text, max_tokens=max_tokens, model=model, past_code=past_code)

    monkeypatch.setattr(summarizer, "first_sentence", recorded)
    texts = [document(12), document(12, start=100)]
    lines = await Summarizer(None, TokenModelRef(MODEL)).one_liners(texts)
    assert on_the_loop == [False, False]
    assert [line.text for line in lines] == [first_sentence(t, max_tokens=ONE_LINER_TOKENS, model=MODEL) for t in texts]
