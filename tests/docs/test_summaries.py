"""doc_summarize and outline summaries: cached in the document, resumable after a deadline, refreshable."""

from __future__ import annotations

import json
import math
import re
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import httpx
import pytest
import trio
import trio.testing

from ctxtrio._errors import InputError
from ctxtrio.docs.service import DocumentService
from ctxtrio.llm._outcome import ONE_LINER_TOKENS
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.llm.summarizer import Summarizer
from ctxtrio.text.extractive import first_sentence
from ctxtrio.text.tokens import TokenModel
from testkit.clock import held_clock
from testkit.deadlines import until

from .conftest import opened

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from ctxtrio._wiring import Wiring

SECTIONS = "\n\n".join(
    f"## Part {n}\n\n" + " ".join(f"Step {n}.{k} configures node-{k} with limit {k * 7}." for k in range(40))
    for n in range(30)
)


class FakeLLM:
    """An OpenAI-compatible endpoint that answers each request after ``delay_s``, counting them."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.calls = 0
        self.delay_s = delay_s

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        await trio.sleep(self.delay_s)
        self.calls += 1
        body = json.loads(request.content)
        prompt = body["messages"][0]["content"]  # one user turn: instructions included
        text = prompt.split("TEXT:\n", 1)[1].split("\nEND OF TEXT", 1)[0]
        figures = ", ".join(reversed(list(dict.fromkeys(re.findall(r"node-\d+", text)))))
        one_liner = prompt.startswith("Summarize the text below in one sentence")
        content = f"Summary {self.calls}." if one_liner else f"Summary {self.calls}: {figures}."
        answer = {"choices": [{"message": {"content": content}}]}
        return httpx.Response(200, json=answer)


@asynccontextmanager
async def service_with_llm(ctx: Wiring, llm: FakeLLM) -> AsyncIterator[DocumentService]:
    """A second DocumentService on the same store whose summarizer talks to ``llm``."""
    async with open_llm_client(LLMSettings("http://llm/v1"), transport=httpx.MockTransport(llm)) as client:
        yield DocumentService(ctx.store, ctx.live, ctx.config, Summarizer(client, ctx.live.tokens))


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time that jumps after 30 ms of real idleness, held still while a worker thread runs."""
    return held_clock(autojump_threshold=0.03)


async def test_whole_document_summary_is_cached_until_refresh(tmp_path: Path) -> None:
    """The LLM's whole-document summary is stored with the document, found after a restart, redone on refresh."""
    llm = FakeLLM()
    async with opened(tmp_path) as ctx, service_with_llm(ctx, llm) as docs:
        await docs.ingest(text=SECTIONS, doc_id="d")
        first = await docs.summarize("d", target_tokens=200)
        assert first.method == "llm" and not first.cached and llm.calls > 1
        calls = llm.calls
        again = await docs.summarize("d", target_tokens=200)
        assert again.cached and again.text == first.text and llm.calls == calls
    async with opened(tmp_path) as ctx, service_with_llm(ctx, llm) as docs:
        restarted = await docs.summarize("d", target_tokens=200)
        assert restarted.cached and restarted.text == first.text and llm.calls == calls
        fresh = await docs.summarize("d", target_tokens=200, refresh=True)
        assert not fresh.cached and llm.calls > calls and fresh.text != first.text


async def test_timed_out_summary_resumes_where_it_stopped(tmp_path: Path, clock: trio.testing.MockClock) -> None:
    """A call cut short by its deadline degrades with a note; the next call asks only for what is missing."""
    # Steps plan in worker threads: at load 12 one took over 30 ms and the clock jumped to
    # the deadline mid-plan (1 request done by then, not 2; on be3c1d7 too).
    clock.autojump_threshold = 0.25
    llm = FakeLLM(delay_s=10.0)
    async with opened(tmp_path) as ctx, service_with_llm(ctx, llm) as docs:
        await docs.ingest(text=SECTIONS, doc_id="d")
        short = await docs.summarize("d", target_tokens=200, wait=until(trio.current_time() + 25.0))
        assert short.method != "llm" and "call again" in short.note
        done_before = llm.calls
        assert done_before == 2
        full = await docs.summarize("d", target_tokens=200, wait=until(math.inf))
        assert full.method == "llm"
        total_without_cache = llm.calls - done_before
        llm.calls = 0
        await docs.summarize("d", target_tokens=200, refresh=True)
        assert total_without_cache == llm.calls - done_before


async def test_range_summary_and_bounds(tmp_path: Path) -> None:
    """A range is summarized from its own chunks; start past the end and end < start are errors."""
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        info = (await docs.ingest(text=SECTIONS, doc_id="d")).doc
        part = await docs.summarize("d", start=1, end=2, target_tokens=100)
        assert (part.start, part.end) == (1, 2) and part.method == "extractive" and "no LLM" in part.note
        whole = await docs.summarize("d", target_tokens=100)
        assert (whole.start, whole.end) == (0, info.chunks - 1) and not whole.cached
        with pytest.raises(InputError, match="past the last chunk"):
            await docs.summarize("d", start=info.chunks)
        with pytest.raises(InputError, match="before start"):
            await docs.summarize("d", start=2, end=1)
        with pytest.raises(InputError, match="target_tokens"):
            await docs.summarize("d", target_tokens=10)


async def test_outline_one_liners_are_cached_per_chunk(tmp_path: Path) -> None:
    """Outline summaries by the LLM are asked once per chunk, then served from the document."""
    llm = FakeLLM()
    async with opened(tmp_path) as ctx, service_with_llm(ctx, llm) as docs:
        ctx.live.tokens.current = TokenModel.flat()  # chunks of the size this test was written for
        info = (await docs.ingest(text=SECTIONS, doc_id="d")).doc
        outline = await docs.outline("d", summarize=True, max_chunks=4)
        assert [entry.summary for entry in outline.entries] == [f"Summary {n}." for n in range(1, 5)]
        assert outline.note == "" and llm.calls == 4 and info.chunks > 4
        again = await docs.outline("d", summarize=True, max_chunks=4)
        assert again.entries == outline.entries and llm.calls == 4


async def test_repeated_outline_calls_join_one_job_per_document(tmp_path: Path, clock: trio.testing.MockClock) -> None:
    """Twenty doc_outline summarize=true calls while the one-liners are being written (a step
    finishes between calls) join one job: the queue keeps room, and a doc_summarize is not
    refused as "the summary queue is full" (each call used to queue a job of its own)."""
    llm = FakeLLM(delay_s=10.0)
    async with opened(tmp_path) as ctx, trio.open_nursery() as nursery:
        async with open_llm_client(LLMSettings("http://llm/v1"), transport=httpx.MockTransport(llm)) as client:
            summarizer = Summarizer(client, ctx.live.tokens)
            await nursery.start(summarizer.run_worker)
            docs = DocumentService(ctx.store, ctx.live, ctx.config, summarizer)
            await docs.ingest(text=SECTIONS, doc_id="d")
            for _ in range(20):
                outline = await docs.outline("d", summarize=True, wait=until(trio.current_time() + 0.5))
                assert "queue is full" not in outline.note
                await trio.sleep(11.0)
            summary = await docs.summarize("d", target_tokens=200, wait=until(trio.current_time() + 0.5))
            assert "queue is full" not in summary.note, summary.note
            nursery.cancel_scope.cancel()


async def test_an_extractive_outline_line_is_taken_past_the_overlap(tmp_path: Path) -> None:
    """Without an LLM a chunk's outline line is the first sentence of what it adds, not of the overlap it
    repeats from the chunk before (which would say what that chunk holds)."""
    async with opened(tmp_path) as ctx:
        ctx.live.tokens.current = TokenModel.flat()
        text = "\n\n".join(f"Fact {n} sets limit {n * 3} for node-{n}." for n in range(600))  # short blocks carry over
        info = (await ctx.documents.ingest(text=text, doc_id="d")).doc
        outline = await ctx.documents.outline("d", summarize=True, max_chunks=6)
        window = await ctx.documents.window("d", start=0, end=5, budget_tokens=100_000)  # chunks past their overlap
        model = ctx.live.tokens.current
        full = [(await ctx.documents.window("d", start=n, end=n, budget_tokens=100_000)).chunks[0] for n in range(6)]
        assert info.chunks > 6 and any(whole.text != shown.text for whole, shown in zip(full, window.chunks))
        for entry, shown in zip(outline.entries, window.chunks, strict=True):
            assert entry.summary == first_sentence(shown.text, max_tokens=ONE_LINER_TOKENS, model=model)


class RejectedLLM(FakeLLM):
    """One-liners the checks reject, for two reasons by turns: a name the text lacks, a line cut mid-sentence."""

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        content = "It sets up the zeta_gateway_77 node." if self.calls % 2 else "It configures the nodes and"
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})


async def test_an_outline_note_says_extractive_once(tmp_path: Path) -> None:
    """Each rejected one-liner's reason came with its own "; extractive" (user23's sitting: "LLM answer rejected:
    ...; extractive; LLM answer rejected: ...; extractive; deadline passed; extractive for now. ..."): the
    outline's note gives the reasons in one clause and "extractive" once."""
    async with opened(tmp_path) as ctx, service_with_llm(ctx, RejectedLLM()) as docs:
        ctx.live.tokens.current = TokenModel.flat()
        await docs.ingest(text=SECTIONS, doc_id="d")
        outline = await docs.outline("d", summarize=True, max_chunks=4)
    assert outline.note.count("extractive") == 1 and outline.note.endswith("; extractive"), outline.note
    assert outline.note.startswith("LLM answers rejected (") and outline.note.count("rejected") == 1, outline.note


async def test_an_outline_line_passes_over_opening_code_in_prose_only(tmp_path: Path) -> None:
    """Without an LLM, a chunk of a document of prose that opens with indented code (the chunker cut a long
    example: pytest's fixtures.rst #1 read '# Assert assert all(...)') has the prose after it as its line; a chunk of
    source code keeps the line it opens with (the method it starts in). The kind is the one ingest gave it."""
    body = "    def isatty(self):\n        return self.raw.isatty()\n\nThe buffer answers isatty like its raw stream.\n"
    async with opened(tmp_path) as ctx:
        for title in ("buffers.md", "buffers.py"):
            await ctx.documents.ingest(text=body, title=title, doc_id=title.replace(".", "-"))
        prose = await ctx.documents.outline("buffers-md", summarize=True)
        code = await ctx.documents.outline("buffers-py", summarize=True)
    assert prose.entries[0].summary == "The buffer answers isatty like its raw stream."
    assert code.entries[0].summary is not None and code.entries[0].summary.startswith("def isatty(self):")
