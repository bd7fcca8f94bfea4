"""stress/query_rewrites.py: a model restates each retrieval question once, for retrieval_bench --rewrites.

Asked through the fake OpenAI-compatible server (testkit/fake_openai.py) as llama-cpp-python's
/v1/chat/completions answers an instruction-tuned model (SmolLM2's ChatML).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "stress"))
import query_rewrites

from testkit.fake_openai import FakeServer, open_fake_openai

QUESTIONS = [
    {"kind": "natural", "query": "how do I ring the bell", "file": "library/curses.rst.txt", "answer": "beep"},
    {"kind": "exact", "query": "curses.beep", "file": "library/curses.rst.txt", "answer": "beep"},
]


def _reply(messages: list[dict[str, str]]) -> str:
    return f"```\n{messages[-1]['content'].rsplit('Question: ', 1)[1]},\n   curses.beep\n```"


async def test_each_question_is_asked_once_at_temperature_zero(tmp_path: Path) -> None:
    """One example turn, then the question; the answer is kept without fences or line breaks, and a second
    run over the same file asks nothing again (a cut-short run resumes)."""
    (tmp_path / "questions.json").write_text(json.dumps({"questions": QUESTIONS}), encoding="utf-8")
    out = tmp_path / "rewrites.json"
    args = argparse.Namespace(questions=[tmp_path / "questions.json"] * 2, ask="keywords", out=out, completion=False)
    async with trio.open_nursery() as nursery:
        server = await open_fake_openai(nursery, FakeServer(reply=_reply))
        await trio.to_thread.run_sync(partial(query_rewrites.ask_all, server.base_url, "smollm2", args))
        await trio.to_thread.run_sync(partial(query_rewrites.ask_all, server.base_url, "smollm2", args))
        nursery.cancel_scope.cancel()
    assert json.loads(out.read_text(encoding="utf-8")) == {
        "how do I ring the bell": "how do I ring the bell, curses.beep",
        "curses.beep": "curses.beep, curses.beep",
    }
    assert server.chat_count == 2
    body = server.chat_bodies[0]
    assert body["temperature"] == 0 and body["max_tokens"] == query_rewrites.MAX_TOKENS["keywords"]
    messages = body["messages"]
    assert isinstance(messages, list) and [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == query_rewrites.EXAMPLES[0][1]


def test_a_base_model_is_shown_every_example_for_keywords() -> None:
    """With one example Gemma 3 270M (base) wrote that example's keywords for every question."""
    prompt = query_rewrites.completion_prompt("keywords", "how do I ring the bell")
    assert all(f"Question: {q}\n" in prompt for q, _, _ in query_rewrites.EXAMPLES)
    assert prompt.endswith("Question: how do I ring the bell\nKeywords used by the Python documentation:")
    assert query_rewrites.completion_prompt("hyde", "q").count("Question:") == 2
