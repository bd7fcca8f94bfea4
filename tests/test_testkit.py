"""The shared test helpers: text_of reads a tool result, stop_process ends a child that ignores SIGTERM,
held_clock keeps virtual time still while a worker thread runs, bert_tokens counts no more than llama-server,
the fake embeddings endpoint holds requests past its ``answers``."""

from __future__ import annotations

import sys
import time

import httpx
import pytest
import trio
import trio.testing
from mcp.types import CallToolResult, ImageContent, TextContent

from testkit.clock import held_clock
from testkit.fake_embeddings import FakeEmbeddings, bert_tokens
from testkit.processes import stop_process
from testkit.results import text_of


def test_text_of_joins_the_text_blocks_and_refuses_none() -> None:
    """Text blocks are joined in order; other blocks are skipped; a result without text is an AssertionError."""
    image = ImageContent(type="image", data="", mime_type="image/png")
    two = CallToolResult(content=[TextContent(type="text", text="a"), image, TextContent(type="text", text="b")])
    assert text_of(two) == "ab"
    with pytest.raises(AssertionError):
        text_of(CallToolResult(content=[image]))


async def test_stop_process_kills_a_child_that_ignores_sigterm() -> None:
    """A child that ignores SIGTERM is killed once the grace period has passed (SIGKILL: returncode -9)."""
    code = "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    process = await trio.lowlevel.open_process([sys.executable, "-c", code], stdout=-1)
    assert process.stdout is not None
    assert (await process.stdout.receive_some()).startswith(b"ready")
    await stop_process(process, grace_s=0.2)
    assert process.returncode == -9
    await process.stdout.aclose()


def test_held_clock_does_not_jump_while_a_worker_thread_runs() -> None:
    """A thread that outlasts the autojump threshold many times over sees no virtual time pass; idle waits still jump."""
    seen: list[float] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep, 5.0)  # a deadline the clock could jump to
            await trio.to_thread.run_sync(time.sleep, 0.2)  # 20 thresholds of real time
            seen.append(trio.current_time())
            await trio.sleep(10.0)
            seen.append(trio.current_time())

    trio.run(main, clock=held_clock(autojump_threshold=0.01))
    assert seen == [0.0, 10.0]


#: llama-server's counts ([CLS] and [SEP] included) of all-MiniLM-L6-v2 as GGUF, from its /tokenize (llama.cpp
#: built from llama-cpp-python 0.3.36's vendored tree, /root/.cache/ctxtrio-realmodel/embed/minilm.gguf).
LLAMA_SERVER_COUNTS = {
    "Return a string representing the current working directory.": 11,
    "os_getcwd_and_chdir snake_case_names here": 19,
    "a → b , x ≤ y": 9,
    "a→b x≤y 5€ price©2024 α∈β": 17,
    "┌──────┐│cell│└──────┘": 3,  # one word of symbols, not in the vocabulary: one [UNK]
    "fix🎉done ok👍": 4,
    "cafe\u0301 re\u0301sume\u0301": 4,  # accents as combining marks, stripped
    "data\u200bbase zero\u200bwidth": 7,  # a zero-width space is dropped inside its word
    "data\u00adbase": 3,
    "line\x07bell\x1bescape": 6,
    "\U00020000\U00020001\U00020002": 5,  # ideographs beyond the BMP, one word each
}


def test_bert_tokens_never_counts_more_than_llama_server() -> None:
    """The fake endpoint refuses an input over its batch by bert_tokens, which said "at least" the model's count
    and counted each symbol, mark and format character as a token: 21 for a box-drawing rule llama-server
    makes 3 of (rvC25 finding 7). Now it counts llama.cpp's words, which the model never makes fewer tokens of."""
    for text, tokens in LLAMA_SERVER_COUNTS.items():
        assert bert_tokens(text) <= tokens, (text, bert_tokens(text), tokens)
    assert bert_tokens("Return a string representing the current working directory.") == 11
    assert bert_tokens("┌──────┐│cell│└──────┘") == 3


async def test_fake_embeddings_answers_only_the_requests_let_on(autojump_clock: trio.testing.MockClock) -> None:
    """With ``answers`` set, the fake endpoint answers that many requests, holds the next until answer() lets it on
    (however long that takes), and answers everything after release()."""
    fake = FakeEmbeddings(answers=1)
    done: list[str] = []
    async with httpx.AsyncClient(transport=fake.transport(), base_url="http://fake/v1") as client:

        async def ask(text: str) -> None:
            answer = await client.post("/embeddings", json={"model": fake.model, "input": [text]})
            assert answer.status_code == 200
            done.append(text)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ask, "first")
            await trio.sleep(1)
            nursery.start_soon(ask, "second")
            await fake.holding()  # "second" waits in the fake
            await trio.sleep(3600)
            assert done == ["first"]
            await fake.answer(1)
            assert fake.requests == [["first"], ["second"]]
            nursery.start_soon(ask, "third")
            await fake.holding()
            fake.release()
    assert done == ["first", "second", "third"] and fake.answered == 3
