"""The summarizer's checks of what the model answers: junk, a rejected step, a prompt over the window, one-liners."""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING

import httpx
import pytest
import trio

from ctxtrio.llm.summarizer import Summarizer
from ctxtrio.text.tokens import TokenModelRef
from testkit.clock import held_clock

from .test_summarizer import MODEL, DictCache, Scripted, document, mock_client, summarizer_for

if TYPE_CHECKING:
    from collections.abc import Callable

    import trio.testing


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """As test_summarizer's: virtual time that jumps after 30 ms of real idleness, held still while a worker thread runs."""
    return held_clock(autojump_threshold=0.03)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (lambda prompt: prompt, "markup"),  # the whole prompt echoed, as Gemma 3 270M did
        (lambda prompt: prompt.split("TEXT:\n", 1)[1][:600], "verbatim"),  # the input carried on
        (lambda prompt: "", "empty content"),
        (lambda prompt: "Step 0 configures node-8011 with limit 9999.", "does not"),  # changed figures
        (lambda prompt: "It is about configuring several nodes and teams.", "drops the figures"),
    ],
)
async def test_junk_answers_are_never_cached_nor_labelled_llm(
    clock: trio.testing.MockClock, reply: Callable[[str], str], reason: str
) -> None:
    """An echo, a copy, an empty answer or changed/dropped figures: extractive, labelled, nothing cached."""

    def handler(request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["messages"][-1]["content"]
        return httpx.Response(200, json={"choices": [{"message": {"content": reply(prompt)}}]})

    cache = DictCache()
    async with mock_client(handler) as client:
        summary = await summarizer_for(client).summarize(document(100), target_tokens=200, cache=cache)
    assert summary.method == "extractive" and reason in summary.note, summary.note
    assert cache.entries == {}
    assert all(sentence in document(100) for sentence in re.split(r"(?<=\.)\s", summary.text))  # verbatim


async def test_a_rejected_step_is_not_asked_again(clock: trio.testing.MockClock) -> None:
    """Once an answer for a step was rejected, the same summarizer does that step extractively."""
    prompts: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        prompts.append(json.loads(request.content)["messages"][-1]["content"])
        return httpx.Response(200, json={"choices": [{"message": {"content": "Nothing with figures here."}}]})

    async with mock_client(handler) as client:
        summarizer = summarizer_for(client)
        first = await summarizer.summarize(document(100), target_tokens=200)
        second = await summarizer.summarize(document(100), target_tokens=200)
    assert first.method == second.method == "extractive" and len(prompts) == 1
    assert second.note.startswith("LLM answer rejected (it drops the figures")


async def test_a_prompt_over_the_window_in_true_tokens_is_not_sent(clock: trio.testing.MockClock) -> None:
    """Near the limit a prompt is counted; over the window minus the answer's room it is never sent (extractive)."""
    script = Scripted()
    counted: list[str] = []
    true_ratio = 3.0  # the model's tokenizer spends 3x the estimate on this text

    async def count_tokens(text: str) -> int:
        counted.append(text)
        return math.ceil(MODEL.estimate(text) * true_ratio)

    text, second = document(100, start=100), document(100, start=200)
    largest = max(MODEL.estimate(text), MODEL.estimate(second))
    window = math.ceil(largest / 0.9) + 430  # one pass each, their prompts near the limit
    async with mock_client(script) as client:
        summarizer = Summarizer(client, TokenModelRef(MODEL), context_tokens=lambda: window, count_tokens=count_tokens)
        summary = await summarizer.summarize(text, target_tokens=200)
        assert script.prompts == [] and len(counted) == 1
        assert summary.method == "extractive" and "window" in summary.note
        true_ratio = 1.0
        summary = await summarizer.summarize(second, target_tokens=200)
        assert summary.method == "llm" and len(script.prompts) == 1 and script.prompts[0] == counted[-1]
        await summarizer.summarize(document(20, start=400), target_tokens=200)  # far below: not counted
    assert len(script.prompts) == 2 and len(counted) == 2


async def test_a_one_liner_that_stops_mid_sentence_is_not_kept(clock: trio.testing.MockClock) -> None:
    """A first line ending in a comma (SmolLM2 answered "Serving a service on port 8127,") is no
    sentence: rejected, nothing cached."""
    chunk = document(3)
    figures = ", ".join(re.findall(r"node-\d+", chunk))

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"choices": [{"message": {"content": f"Nodes {figures} are configured,"}}]})

    cache = DictCache()
    async with mock_client(handler) as client:
        line = await summarizer_for(client).one_liner(chunk, cache=cache)
    assert line.method == "extractive" and "stops mid-sentence" in line.note and cache.entries == {}


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        (lambda figures: f"The text is:\nNodes {figures} are configured.", "Nodes {} are configured."),
        (lambda figures: f"Nodes {figures} are configured.\nIt also sets node-9999 to limit 4242.", None),
    ],
    ids=["announcement-first", "invented-second-line"],
)
async def test_a_one_liner_caches_exactly_the_line_that_passed_the_checks(
    clock: trio.testing.MockClock, reply: Callable[[str], str], kept: str | None
) -> None:
    """The line kept is the first that says something, checked on its own; an answer that
    invents anywhere is rejected, even when its first line is faithful (nothing cached)."""
    chunk = document(3)
    figures = ", ".join(re.findall(r"node-\d+", chunk))

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"choices": [{"message": {"content": reply(figures)}}]})

    cache = DictCache()
    async with mock_client(handler) as client:
        line = await summarizer_for(client).one_liner(chunk, cache=cache)
    if kept is None:
        assert line.method == "extractive" and "does not" in line.note and cache.entries == {}
    else:
        assert (line.text, line.method) == (kept.format(figures), "llm")
        assert list(cache.entries.values()) == [line.text]
