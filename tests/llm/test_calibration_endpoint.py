"""Calibration against endpoints that refuse, answer slowly or hang, in virtual time (MockClock, MockTransport)."""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import TYPE_CHECKING

import httpx
import trio
import trio.testing

from ctxtrio.llm._samples import SAMPLES
from ctxtrio.llm.calibration import run_calibrator
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.text.tokens import TokenModel, TokenModelRef
from testkit.fake_openai import true_tokens

from .test_calibration import _calibrated

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


async def _calibrate_within(
    settings: LLMSettings,
    transport: httpx.MockTransport,
    ref: TokenModelRef,
    tmp_path: Path,
    *,
    within_s: float,
    every_s: float,
) -> None:
    """Run a calibrator over ``transport`` until ``ref`` is calibrated (looked at every ``every_s``) or ``within_s`` passed."""
    async with open_llm_client(settings, transport=transport) as client, trio.open_nursery() as nursery:
        nursery.start_soon(partial(run_calibrator, client, ref, cache_path=tmp_path / "c.json"))
        with trio.move_on_after(within_s):
            while not _calibrated(ref)():
                await trio.sleep(every_s)
        nursery.cancel_scope.cancel()


async def test_unreachable_endpoint_is_retried_with_backoff(clock: trio.testing.MockClock, tmp_path: Path) -> None:
    """A refusing endpoint never crashes the task: it retries at t = 0, 5, 15, 35, 75 (5 s doubling)."""
    attempts: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(trio.current_time())
        raise httpx.ConnectError("connection refused", request=request)

    ref = TokenModelRef(TokenModel.cold())
    settings = LLMSettings("http://llm/v1")
    async with open_llm_client(settings, transport=httpx.MockTransport(handler)) as client:
        with trio.move_on_after(100.0):
            await run_calibrator(client, ref, cache_path=tmp_path / "c.json")
    assert attempts == [0.0, 5.0, 15.0, 35.0, 75.0]
    assert ref.current == TokenModel.cold()


async def test_calibration_requests_have_their_own_timeout(clock: trio.testing.MockClock, tmp_path: Path) -> None:
    """A tokenize answer slower than the client's 5 s chat deadline but within probe_timeout_s=30 still calibrates."""
    slow_s = 12.0

    async def slow_handler(request: httpx.Request) -> httpx.Response:
        await trio.sleep(slow_s)
        path = request.url.path
        if path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "m"}]})
        if path == "/extras/tokenize":
            text = json.loads(request.content)["input"]
            return httpx.Response(200, json={"tokens": list(range(1 + true_tokens(text)))})
        return httpx.Response(404)

    ref = TokenModelRef(TokenModel.cold())
    settings = LLMSettings("http://llm/v1", timeout_s=5.0, probe_timeout_s=30.0)
    await _calibrate_within(settings, httpx.MockTransport(slow_handler), ref, tmp_path, within_s=2000.0, every_s=1.0)
    assert ref.current.source.startswith("rates measured via tokenize")


async def test_no_model_server_is_one_info_line_not_repeated_warnings(
    clock: trio.testing.MockClock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Refused for 100 s: one INFO line saying what it means, no WARNING; a recovery is logged once."""
    refusing = True

    def handler(request: httpx.Request) -> httpx.Response:
        if refusing:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(500, json={"error": "boom"})

    caplog.set_level(logging.DEBUG, logger="ctxtrio.llm.calibration")
    ref = TokenModelRef(TokenModel.cold())
    async with open_llm_client(LLMSettings("http://llm/v1"), transport=httpx.MockTransport(handler)) as client:
        with trio.move_on_after(100.0):
            await run_calibrator(client, ref, cache_path=tmp_path / "c.json")
        records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "ctxtrio.llm.calibration"]
        assert [level for level, _ in records] == [logging.INFO] + [logging.DEBUG] * 4
        assert "no model server answers at http://llm/v1" in records[0][1] and "--no-llm" in records[0][1]
        caplog.clear()
        refusing = False
        with trio.move_on_after(400.0):
            await run_calibrator(client, ref, cache_path=tmp_path / "c.json")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "retrying quietly" in warnings[0].getMessage()


async def test_a_slow_server_calibrates_by_resuming_with_a_longer_deadline(
    clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    """Prompts at 12 tokens/s (the longest sample ~50 s against 30 s): calibration finishes, each sample sent <= twice.

    The fake reproduces llama-cpp-python's non-streaming chat: ``create_chat_completion``
    runs in ``run_in_threadpool`` under the server's lock (llama_cpp/server/app.py), so
    a request whose client gave up is still evaluated, and the next one waits behind it.
    Before, every attempt started over with 30 s per request and never finished.
    """
    busy_until = 0.0
    sent: dict[str, int] = {}

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal busy_until
        if request.url.path == "/v1/models":
            return httpx.Response(200, json={"data": [{"id": "slow"}]})
        if request.url.path != "/v1/chat/completions":
            return httpx.Response(404)
        text = json.loads(request.content)["messages"][-1]["content"]
        sent[text] = sent.get(text, 0) + 1
        tokens = true_tokens(text) + 4
        busy_until = max(trio.current_time(), busy_until) + tokens / 12.0  # evaluated even if abandoned
        await trio.sleep_until(busy_until)
        choice = {"message": {"role": "assistant", "content": "x"}, "finish_reason": "length"}
        return httpx.Response(200, json={"choices": [choice], "usage": {"prompt_tokens": tokens}})

    assert max(true_tokens(text) for text in SAMPLES) / 12.0 > 30.0
    ref = TokenModelRef(TokenModel.cold())
    settings = LLMSettings("http://llm/v1", probe_timeout_s=30.0)
    await _calibrate_within(settings, httpx.MockTransport(handler), ref, tmp_path, within_s=20_000.0, every_s=60.0)
    assert ref.current.source.startswith("rates measured via usage slope")
    assert max(sent[text] for text in SAMPLES) <= 2
