"""The public surface of ctxtrio.llm, pinned for mypy with assert_type (and run once)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, assert_type

import httpx
import trio

import ctxtrio.llm as llm
from ctxtrio.text.tokens import TokenModel, TokenModelRef
from testkit.deadlines import until

if TYPE_CHECKING:
    from pathlib import Path


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted and names exactly the re-exported objects."""
    assert llm.__all__ == sorted(llm.__all__)
    assert all(hasattr(llm, name) for name in llm.__all__)


async def test_public_signatures(tmp_path: Path) -> None:
    """The calls _wiring.py makes type-check as documented and run against a mock endpoint."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"data": [{"id": "m"}]})
        body = {"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": 3}}
        return httpx.Response(200, json=body)

    settings = llm.LLMSettings("http://llm/v1", model="", api_key=None, timeout_s=5.0)
    ref = TokenModelRef(TokenModel.cold())
    lengths: list[int] = []
    async with llm.open_llm_client(settings, transport=httpx.MockTransport(handler)) as client:
        assert_type(client, llm.LLMClient)
        completion = await client.complete([llm.ChatMessage("user", "x")], max_tokens=5)
        assert_type(completion, llm.Completion)
        assert_type(await client.list_models(), list[str])
        assert_type(await client.tokenize("x"), int | None)
        assert_type(await client.context_length("m"), int | None)
        assert_type(client.breaker_state, llm.BreakerState)
        async with trio.open_nursery() as nursery:
            started = await nursery.start(
                lambda task_status: llm.run_calibrator(
                    client,
                    ref,
                    cache_path=tmp_path / "calibration.json",
                    margin=0.05,
                    on_context_length=lengths.append,
                    task_status=task_status,
                )
            )
            assert started is None
            nursery.cancel_scope.cancel()
    assert completion == llm.Completion("hi", 3, None)


class _Cache:
    def get(self, key: str) -> str | None:
        return None

    async def put(self, key: str, text: str) -> None:
        pass


async def test_summarizer_signatures() -> None:
    """Summarizer(client | None, ref) and its two calls type-check and return Summary."""
    cache: llm.SummaryCache = _Cache()
    summarizer = llm.Summarizer(None, TokenModelRef(TokenModel.cold()))
    summary = await summarizer.summarize("Text. " * 400, target_tokens=60, wait=until(1e9), cache=cache)
    assert_type(summary, llm.Summary)
    assert_type(summary.method, Literal["verbatim", "llm", "extractive", "llm+extractive"])
    line = await summarizer.one_liner("# Title\n\nFirst sentence.", wait=until(1e9), cache=cache)
    assert_type(line, llm.Summary)
    assert (summary.method, line.method) == ("extractive", "extractive")
