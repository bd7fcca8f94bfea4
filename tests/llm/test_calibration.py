"""Calibration against the fake server: measured rates, a zero usage rejected, the cache, model changes (the fit
itself: test_calibration_fit.py; endpoints that refuse or are slow, in virtual time: test_calibration_endpoint.py)."""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import pytest
import trio
import trio.testing

from ctxtrio.llm._samples import OVERHEAD_PROBES, SAMPLES, WARM_UP
from ctxtrio.llm.calibration import MARGIN, measure_rates, run_calibrator
from ctxtrio.llm.client import LLMClient, open_llm_client
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.text.tokens import CHARACTER_CLASSES, ScriptClass, TokenModel, TokenModelRef
from testkit.fake_openai import (
    DENSE_RATES,
    TRUE_RATES,
    ContextStyle,
    FakeServer,
    open_fake_openai,
    true_tokens,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

# Texts the calibration never sees.
UNSEEN = {
    "english": (
        "The committee postponed its decision until the auditors had finished their review. "
        "Several members argued that the delay would cost the city more than the repairs "
        "themselves, but the chair insisted on seeing the full report before any vote. In the "
        "meantime, the bridge stays closed to heavy traffic, and buses take the longer route "
        "through the industrial district, adding about twelve minutes to each trip."
    ),
    "chinese": (
        "会议决定把最终结论推迟到审计结束以后再公布。几位委员认为拖延的代价会比维修本身更高，"
        "但主席坚持在投票之前必须看到完整的报告。在此期间，大桥对重型车辆关闭，公交车改走"
        "工业区的绕行路线，每一趟大约多花十二分钟。"
    ),
    "korean": (
        "위원회는 감사가 끝날 때까지 결정을 미루기로 했다. 몇몇 위원은 지연이 수리 비용보다 "
        "더 큰 손해라고 주장했지만, 위원장은 투표 전에 전체 보고서를 보아야 한다고 고집했다. "
        "그동안 다리는 대형 차량에 닫혀 있고 버스는 공업 지구를 돌아가는 길로 다닌다."
    ),
    "code": (
        "async def drain(queue: trio.MemoryReceiveChannel[bytes], out: list[bytes]) -> int:\n"
        "    total = 0\n"
        "    async for chunk in queue:\n"
        "        if not chunk or chunk[0] == 0x00:\n"
        "            continue\n"
        "        out.append(chunk[1:])\n"
        "        total += len(chunk) - 1  # header byte\n"
        "    return total\n"
        "\n"
        "CONFIG = {'retries': 3, 'backoff_s': [0.5, 1.0, 2.0], 'hosts': ['a', 'b']}\n"
    ),
}


PROFILES = pytest.mark.parametrize("rates", [TRUE_RATES, DENSE_RATES], ids=["default", "dense"])


def ratios(model: TokenModel, rates: Mapping[str, float] = TRUE_RATES) -> dict[str, float]:
    """Estimate / true count of every unseen text."""
    return {name: model.estimate(text) / true_tokens(text, rates) for name, text in UNSEEN.items()}


#: The client's timeout in the tests that run in real time (loopback HTTP, worker threads):
#: a hang guard, not a speed check. 5 s was exceeded on a 2-core machine under load.
REAL_TIMEOUT_S = 120.0


async def wait_for(predicate: Callable[[], bool], timeout_s: float = 120.0) -> None:
    """Poll ``predicate`` until it holds (fails the test after ``timeout_s``: a hang guard, not a speed check).

    These tests run in real time (real loopback HTTP, worker threads); a calibration
    took more than 5 s on a 2-core machine at load 13, which failed the test.
    """
    with trio.fail_after(timeout_s):
        while not predicate():
            await trio.sleep(0.01)


async def _calibrate(
    nursery: trio.Nursery, server: FakeServer, cache_path: Path, *, retry_min_s: float = 5.0
) -> tuple[TokenModelRef, LLMClient]:
    """Start the fake and a calibrator in ``nursery``; return the ref and the open client."""
    await open_fake_openai(nursery, server)
    ref = TokenModelRef(TokenModel.cold())
    client = await _start_calibrator(nursery, server.base_url, ref, cache_path=cache_path, retry_min_s=retry_min_s)
    return ref, client


async def _start_calibrator(nursery: trio.Nursery, base_url: str, ref: TokenModelRef, **options: Any) -> LLMClient:
    """A client and a calibrator on it, in one task of ``nursery``; returns the client.

    The calibrator runs in a nursery inside the client's ``async with``, as in
    ``_wiring.py``: on cancellation it has finished before the client closes. (Started as
    two sibling tasks, the client could close first, and a calibrator leaving a
    worker thread would send on a closed client: RuntimeError, the flaky failure of
    issue 11.)
    """

    async def run(*, task_status: trio.TaskStatus[LLMClient]) -> None:
        async with open_llm_client(
            LLMSettings(base_url, timeout_s=REAL_TIMEOUT_S, probe_timeout_s=REAL_TIMEOUT_S)
        ) as client:
            async with trio.open_nursery() as inner:
                await inner.start(partial(run_calibrator, client, ref, **options))
                task_status.started(client)

    client: LLMClient = await nursery.start(run)
    return client


def _calibrated(ref: TokenModelRef) -> Callable[[], bool]:
    return lambda: ref.current.source.startswith("rates measured via")


@PROFILES
async def test_tokenize_calibration_estimates_unseen_text_within_ten_percent(
    nursery: trio.Nursery, tmp_path: Path, rates: Mapping[str, float]
) -> None:
    """Via /tokenize, estimates of unseen English, Chinese, Korean and code are 1.00–1.10 × true."""
    server = FakeServer(tokenize="llamacpp", rates=rates)
    ref, _ = await _calibrate(nursery, server, tmp_path / "calibration.json")
    await wait_for(_calibrated(ref))
    assert ref.current.source.startswith("rates measured via tokenize against fake-model-7b at http")
    for name, ratio in ratios(ref.current, rates).items():
        assert 1.0 <= ratio <= 1.10, (name, ratio)
    assert server.chat_count == 0


@PROFILES
async def test_usage_slope_calibration_estimates_unseen_text_within_ten_percent(
    nursery: trio.Nursery, tmp_path: Path, rates: Mapping[str, float]
) -> None:
    """Without tokenize, the usage slope of max_tokens=1 chats gives estimates 1.00–1.10 × true."""
    server = FakeServer(tokenize=None, rates=rates)
    ref, _ = await _calibrate(nursery, server, tmp_path / "calibration.json")
    await wait_for(_calibrated(ref))
    assert ref.current.source.startswith("rates measured via usage slope against fake-model-7b")
    for name, ratio in ratios(ref.current, rates).items():
        assert 1.0 <= ratio <= 1.10, (name, ratio)
    prompts = server.prompts
    assert prompts == [WARM_UP, *OVERHEAD_PROBES, *SAMPLES]
    assert all(body["max_tokens"] == 1 for body in server.chat_bodies)
    assert all(a[:8] != b[:8] for a, b in zip(prompts, prompts[1:])), "shared prefix"


@pytest.mark.parametrize("tokenize", ["llamacpp", None], ids=["tokenize", "usage"])
async def test_measured_rates_match_the_true_rates(nursery: trio.Nursery, tokenize: Literal["llamacpp"] | None) -> None:
    """Raw measured rates of the character classes are within 3% of the fake's true ones (prefix cache included)."""
    server = await open_fake_openai(nursery, FakeServer(tokenize=tokenize, rates=DENSE_RATES))
    async with open_llm_client(
        LLMSettings(server.base_url, timeout_s=REAL_TIMEOUT_S, probe_timeout_s=REAL_TIMEOUT_S)
    ) as client:
        calibration = await measure_rates(client)
    assert calibration.method == ("tokenize" if tokenize else "usage slope")
    for cls in CHARACTER_CLASSES:
        assert calibration.rates[cls] == pytest.approx(DENSE_RATES[cls.value], rel=0.03, abs=0.01), cls
    assert len(calibration.samples) == len(SAMPLES) > len(ScriptClass) + 1  # over-determined


async def test_published_rates_carry_the_three_percent_margin(nursery: trio.Nursery, tmp_path: Path) -> None:
    """The calibrator publishes the lifted rates times 1.05 (the README's margin), not the lift alone."""
    server = FakeServer(tokenize="llamacpp")
    ref, _ = await _calibrate(nursery, server, tmp_path / "c.json")
    await wait_for(_calibrated(ref))
    served = await open_fake_openai(nursery, FakeServer(tokenize="llamacpp"))
    async with open_llm_client(
        LLMSettings(served.base_url, timeout_s=REAL_TIMEOUT_S, probe_timeout_s=REAL_TIMEOUT_S)
    ) as client:
        calibration = await measure_rates(client)
    lifted = calibration.published(0.0)
    for cls in ScriptClass:
        assert ref.current.rates[cls] == pytest.approx(lifted[cls] * (1 + MARGIN)), cls
    assert MARGIN == 0.05


async def test_gemma_like_rates_never_undercount_digits_and_emoji(nursery: trio.Nursery, tmp_path: Path) -> None:
    """With one token per digit and per emoji (as Gemma), calibrated estimates of CSV, hex and emoji are >= true."""
    ref, _ = await _calibrate(nursery, FakeServer(tokenize=None), tmp_path / "c.json")
    await wait_for(_calibrated(ref))
    texts = [
        "-214.0,560.3,-940.248,99.0\n" * 20,
        "8267c7e8521758cd3b0b4d897c2d2cbe340d6239\n" * 10,
        "ship 🚀🎉 done ✅🙏 " * 20,
    ]
    for text in texts:
        assert 1.0 <= ref.current.estimate(text) / true_tokens(text) <= 1.25, text[:20]


async def test_extras_tokenize_calibration_cancels_the_bos_token(nursery: trio.Nursery, tmp_path: Path) -> None:
    """llama-cpp-python's {root}/extras/tokenize (BOS included) calibrates as well as /tokenize."""
    server = FakeServer(tokenize="extras", context_style=None)
    ref, _ = await _calibrate(nursery, server, tmp_path / "c.json")
    await wait_for(_calibrated(ref))
    assert ("POST", "/extras/tokenize") in server.requests
    assert ("POST", "/v1/extras/tokenize") not in server.requests
    for name, ratio in ratios(ref.current).items():
        assert 1.0 <= ratio <= 1.10, (name, ratio)


async def test_zero_usage_is_rejected_and_the_cold_model_kept(
    nursery: trio.Nursery, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """usage.prompt_tokens = 0 is refused: the cold model stays, a warning is logged, no cache written."""
    server = FakeServer(tokenize=None, mode="zero_usage")
    cache_path = tmp_path / "calibration.json"
    ref, _ = await _calibrate(nursery, server, cache_path, retry_min_s=0.05)
    await wait_for(lambda: "usage.prompt_tokens is 0" in caplog.text)
    await wait_for(lambda: server.chat_count >= 2)  # retried
    assert ref.current == TokenModel.cold()
    assert not cache_path.exists()


async def test_cache_is_reused_without_calibration_requests(nursery: trio.Nursery, tmp_path: Path) -> None:
    """A second calibrator for the same (endpoint, model) publishes the cached rates, sending no samples."""
    server = FakeServer(tokenize=None)
    cache_path = tmp_path / "calibration.json"
    first, _ = await _calibrate(nursery, server, cache_path)
    await wait_for(_calibrated(first))
    chats, paths = server.chat_count, len(server.requests)
    second = TokenModelRef(TokenModel.cold())
    await _start_calibrator(nursery, server.base_url, second, cache_path=cache_path)
    await wait_for(_calibrated(second))
    assert second.current.rates == first.current.rates
    assert second.current.source.endswith("(cached)")
    assert server.chat_count == chats
    assert all("tokenize" not in path for _, path in server.requests[paths:])
    entries = json.loads(cache_path.read_text())["entries"]
    assert [(e["endpoint"], e["model"]) for e in entries.values()] == [(server.base_url, "fake-model-7b")]


async def test_model_change_triggers_recalibration(nursery: trio.Nursery, tmp_path: Path) -> None:
    """When /models names another model, the calibrator measures it and reports its context length."""
    server = FakeServer(tokenize="llamacpp", context_style="lmstudio", n_ctx=4096)
    lengths: list[int] = []
    ref = TokenModelRef(TokenModel.cold())
    await open_fake_openai(nursery, server)
    await _start_calibrator(
        nursery, server.base_url, ref, cache_path=tmp_path / "c.json", on_context_length=lengths.append, recheck_s=0.05
    )
    await wait_for(lambda: "fake-model-7b" in ref.current.source and bool(lengths))
    server.model_id, server.n_ctx = "other-model-3b", 16384
    await wait_for(lambda: "other-model-3b" in ref.current.source and len(lengths) == 2)
    assert lengths == [4096, 16384]
    assert not ref.current.source.endswith("(cached)")


async def _first_lengths(nursery: trio.Nursery, server: FakeServer, tmp_path: Path) -> list[int]:
    """A calibrator against ``server``: the context lengths it reported by the time it reported one."""
    lengths: list[int] = []
    await open_fake_openai(nursery, server)
    await _start_calibrator(
        nursery,
        server.base_url,
        TokenModelRef(TokenModel.cold()),
        cache_path=tmp_path / "c.json",
        on_context_length=lengths.append,
    )
    await wait_for(lambda: bool(lengths))
    return lengths


@pytest.mark.parametrize("style", ["lmstudio", "llamacpp", "vllm", "ollama"])
async def test_context_length_is_reported(nursery: trio.Nursery, tmp_path: Path, style: ContextStyle) -> None:
    """on_context_length receives the loaded window from each server style."""
    assert await _first_lengths(nursery, FakeServer(context_style=style, n_ctx=32768), tmp_path) == [32768]


async def test_started_comes_before_any_answer(nursery: trio.Nursery, tmp_path: Path) -> None:
    """Against a hanging server nursery.start returns at once; nothing is published."""
    server = FakeServer(mode="hang")
    ref = TokenModelRef(TokenModel.cold())
    await open_fake_openai(nursery, server)
    with trio.fail_after(REAL_TIMEOUT_S):  # the server never answers: returning at all is the point
        await _start_calibrator(nursery, server.base_url, ref, cache_path=tmp_path / "c.json")
    await wait_for(lambda: bool(server.requests))
    assert ref.current == TokenModel.cold()


async def test_llama_cpp_python_window_comes_from_its_overflow_error(nursery: trio.Nursery, tmp_path: Path) -> None:
    """llama-cpp-python tells no window; the calibrator learns it from "maximum context length is N"."""
    server = FakeServer(tokenize="extras", context_style=None, n_ctx=8192)
    assert await _first_lengths(nursery, server, tmp_path) == [8192]
    assert server.chat_count == 1  # the one overflow probe; counts came from /extras/tokenize


async def test_llama_cpp_python_window_is_learned_when_the_rates_are_cached(
    nursery: trio.Nursery, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A restart takes its rates from the cache and still learns llama-cpp-python's window from the overflow error."""
    caplog.set_level(logging.INFO, logger="ctxtrio.llm.calibration")
    server = FakeServer(tokenize="extras", context_style=None, n_ctx=8192)
    assert await _first_lengths(nursery, server, tmp_path) == [8192]  # measured and cached
    lengths: list[int] = []
    ref = TokenModelRef(TokenModel.cold())
    await _start_calibrator(
        nursery, server.base_url, ref, cache_path=tmp_path / "c.json", on_context_length=lengths.append
    )
    # A fresh client (a new process) has tokenized nothing yet; its rates come from the cache.
    await wait_for(lambda: caplog.text.count("token counts now from") == 2)
    assert ref.current.source.endswith("(cached)")
    assert lengths == [8192]
