"""The calibration task: measures the loaded model's token rates and publishes them.

:func:`run_calibrator` reports itself started at once, so it never delays startup or
the first ``tools/list``. Then, in the background and for as long as it runs:

1. ask which model is loaded (the configured one, else the first of ``GET /models``);
2. when that changes (and at the start): take the rates from the cache file if it
   holds this (endpoint, model) pair, else measure them and write the cache; learn the
   model's context window (:meth:`LLMClient.context_length`; for llama-cpp-python,
   which reports none, from its own overflow error) and report it through
   ``on_context_length``; tell ``counter`` whether exact counts are available;
3. publish ``TokenModel(rates, source=...)`` into ``ref.current``;
4. sleep ``recheck_s`` and go back to 1.

Measuring (see :mod:`._fit`): every text of :data:`._samples.SAMPLES` (30 long texts,
many per class, mixed real-world ones among them), one request at a time. With a
tokenize endpoint the counts are exact; otherwise each sample is the only message of a
chat with ``max_tokens: 1`` and the count is ``usage.prompt_tokens``, after one warm-up
request so the server's prefix cache treats every measured prompt alike. The fixed
overhead (chat template, BOS) is measured directly: the smaller count of two
one-character prompts (:data:`._samples.OVERHEAD_PROBES`), minus one (at least 0). The fit is
over-determined, non-negative and asymmetric (under-counts weigh more); the published
rates are lifted until no sample is under-counted (a few percent), plus ``margin``
(:data:`MARGIN`, 3%, by default). The fit runs in a worker thread. Every calibration request is a probe,
with the client's ``probe_timeout_s`` as its deadline (not the summaries'
``--llm-deadline``: a cold model may take long to load). After a timeout the client's
probes get twice as long for the next attempt (:meth:`LLMClient.stretch_probes
<.client.LLMClient.stretch_probes>`, up to 8× ``probe_timeout_s``), and the samples already counted for this model are kept, so a slow
machine converges instead of starting over: llama-cpp-python goes on evaluating a
request whose client gave up (``create_chat_completion`` runs in ``run_in_threadpool``
under its lock, llama_cpp/server/app.py), so the retry would meet the same deadline
behind the abandoned one (issue 22: SmolLM2 at ~20 prompt tokens/s never calibrated).

An unreachable endpoint, a timeout, zero or missing usage, or implausible rates are
:class:`~ctxtrio._errors.LLMError`: logged to stderr, the previous model is kept, and
the attempt is repeated after a backoff (``retry_min_s`` doubling to ``retry_max_s``).
A cache file that cannot be read or written is logged and otherwise ignored. Any
other exception is a bug and propagates (it cancels the tree). Cancellation stops the
task wherever it is; a cache write already handed to its thread completes.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Final, Literal

import trio

from .._errors import LLMError, LLMResponseError, LLMTimeoutError, LLMUnavailableError
from ..text.tokens import ScriptClass, TokenModel, TokenModelRef, class_counts
from ._fit import Measurement, fit_rates, publishable_rates
from ._json import as_object
from ._samples import OVERHEAD_PROBES, SAMPLES, WARM_UP
from .messages import ChatMessage

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from .client import LLMClient
    from .counting import TokenCounter

__all__ = ["MARGIN", "Calibration", "Method", "measure_rates", "run_calibrator"]

logger = logging.getLogger(__name__)

Method = Literal["tokenize", "usage slope"]
#: Added to the lifted rates: the README's 5%. Texts unlike every sample are still
#: under-counted by the lift alone: pretty-printed JSON 3.5% (issue 22, tokenize fit), and a
#: JSON recall under a usage-slope fit of SmolLM2 at least 3.3% (4,010 true tokens in a 4,000
#: budget with 3%: stress/real_model.py --model smollm2, calibrated state, 2026-12-04).
MARGIN: Final = 0.05
_CACHE_VERSION = 5  # 2: twelve features, published rates; 3: thirteen (indent), asymmetric fit; 4: margin; 5: 5%
_MAX_STRETCH: Final = 8.0  # the probes' deadline grows to at most this many times probe_timeout_s
#: Counts already measured, by (method, text): kept across the attempts for one model.
Counted = dict[tuple[Method, str], int]


async def run_calibrator(
    client: LLMClient,
    ref: TokenModelRef,
    *,
    cache_path: Path,
    margin: float = MARGIN,
    on_context_length: Callable[[int], None] | None = None,
    counter: TokenCounter | None = None,
    recheck_s: float = 60.0,
    retry_min_s: float = 5.0,
    retry_max_s: float = 300.0,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Keep ``ref.current`` calibrated to the loaded model; runs until cancelled.

    ``on_context_length`` receives the loaded context window (tokens) once per model,
    when the server tells it. Never returns; only a bug makes it raise.
    """
    task_status.started()
    endpoint = client.settings.base_url
    done_for: str | None = None  # the model whose rates are published
    retry_s = retry_min_s
    reported: str | None = None  # the kind of failure already logged; repeats go to debug
    stretch = 1.0  # of the probes' deadline: doubles after a timeout, up to _MAX_STRETCH
    counted: dict[str, Counted] = {}  # by model: the samples counted so far
    while True:
        try:
            model = await client.loaded_model()
            if model is None:
                raise LLMResponseError("the server lists no loaded model")
            if model != done_for:
                known = counted.setdefault(model, {})
                method, ref.current = await _rates_for(client, endpoint, model, cache_path, margin, known)
                counted.clear()
                if counter is not None:
                    counter.set_model(model, exact=method == "tokenize")
                length = await _context_length(client, model, method)
                if length is not None and on_context_length is not None:
                    on_context_length(length)
                done_for = model
                logger.info("token counts now from %s; context window %s", ref.current.source, length or "unknown")
        except LLMError as exc:
            if isinstance(exc, LLMTimeoutError):
                stretch = min(stretch * 2.0, _MAX_STRETCH)
                client.stretch_probes(stretch)
            reported = _report_failure(endpoint, exc, ref.current.source, retry_s, reported)
            await trio.sleep(retry_s)
            retry_s = min(retry_s * 2.0, retry_max_s)
            continue
        if reported is not None:
            logger.info("model server at %s answers: summaries use it from now on", endpoint)
            reported = None
        retry_s = retry_min_s
        await trio.sleep(recheck_s)


def _report_failure(endpoint: str, exc: LLMError, source: str, retry_s: float, reported: str | None) -> str:
    """Log one calibration failure; return its kind, which the next call gets as ``reported``.

    No model server at all is the normal state of a first start, not a fault: it gets one
    line at INFO saying what that means. Other failures get one WARNING. A failure of the
    kind already reported, or an unavailable endpoint after any reported failure (the
    breaker that failure opened), is logged at DEBUG only, so retries stay quiet.
    """
    kind = "absent" if isinstance(exc, LLMUnavailableError) else "failing"
    if kind == reported or (reported is not None and kind == "absent"):
        # Unavailable after a failure is mostly the breaker that failure opened: nothing new.
        logger.debug("calibration against %s: %s; next try in %g s", endpoint, exc, retry_s)
        return reported
    if kind == "absent":
        logger.info(
            "no model server answers at %s (%s): summaries are extractive and token counts "
            "estimated from %s until one does; checking again quietly in the background "
            "(--no-llm stops this, --llm-base-url points elsewhere)",
            endpoint, exc, source,
        )  # fmt: skip
    else:
        logger.warning("calibration against %s: %s; keeping %s; retrying quietly with backoff", endpoint, exc, source)
    return kind


async def _context_length(client: LLMClient, model: str, method: Method) -> int | None:
    """The window from the server's endpoints, else (llama-cpp-python) from its overflow error."""
    length = await client.context_length(model)
    if length is None and method == "tokenize" and client.tokenize_style is None:
        # Rates from the cache (a restart): nothing has been tokenized yet, so which server this is
        # is unknown. One short count tells, else the window stayed unknown and the budget the
        # built-in default (4,000 tokens: more than half, or all, of a small model's window).
        await client.tokenize("x")
    if length is None and method == "tokenize" and client.tokenize_style == "llama-cpp-python":
        length = await client.context_from_overflow()
    return length


@dataclass(frozen=True, slots=True)
class Calibration:
    """What one measurement found: the method, the raw fit and the samples it came from."""

    method: Method
    rates: dict[ScriptClass, float]
    overhead: float
    samples: tuple[Measurement, ...]

    def published(self, margin: float) -> dict[ScriptClass, float]:
        """Rates lifted so no sample is under-counted, plus ``margin``."""
        return publishable_rates(self.samples, self.rates, self.overhead, margin=margin)


async def measure_rates(
    client: LLMClient,
    *,
    samples: tuple[str, ...] = SAMPLES,
    force: Method | None = None,
    known: Counted | None = None,
) -> Calibration:
    """Measure the loaded model: tokenize if offered, else the usage of one-token chats.

    Sends the samples one after the other; raises LLMError on failure or bogus counts.
    ``force="usage slope"`` skips the tokenizer (to measure what servers without one get).
    ``known`` holds counts of an earlier attempt (not sent again) and receives new ones.
    """
    known = {} if known is None else known
    probe = await client.tokenize(samples[0]) if force != "usage slope" else None
    method: Method
    count: Callable[[str], Awaitable[int]]
    if probe is not None:
        method, count = "tokenize", _tokenize_counter(client)
        known["tokenize", samples[0]] = probe
    else:
        method, count = "usage slope", _usage_counter(client)
        await count(WARM_UP)

    async def measure(text: str) -> int:
        if (method, text) not in known:
            known[method, text] = await count(text)
        return known[method, text]

    # A lower overhead only raises the estimates: a probe counted 0 (no BOS) gives 0.
    overhead = max(0, min([await measure(text) for text in OVERHEAD_PROBES]) - 1)
    measured: list[Measurement] = []
    for text in samples:
        measured.append(Measurement(class_counts(text), await measure(text)))
    rates, _ = await trio.to_thread.run_sync(partial(fit_rates, measured, overhead=overhead))
    return Calibration(method, rates, overhead, tuple(measured))


def _tokenize_counter(client: LLMClient) -> Callable[[str], Awaitable[int]]:
    async def count(text: str) -> int:
        tokens = await client.tokenize(text)
        if tokens is None:
            raise LLMResponseError("calibration: the tokenize endpoint stopped answering")
        return tokens

    return count


def _usage_counter(client: LLMClient) -> Callable[[str], Awaitable[int]]:
    async def count(text: str) -> int:
        tokens = await client.count_prompt_tokens([ChatMessage("user", text)])
        if tokens is None:
            raise LLMResponseError("calibration: the answer carries no usage.prompt_tokens")
        if tokens <= 0:
            raise LLMResponseError(f"calibration: usage.prompt_tokens is {tokens}")
        return tokens

    return count


async def _rates_for(
    client: LLMClient, endpoint: str, model: str, cache_path: Path, margin: float, known: Counted
) -> tuple[Method, TokenModel]:
    """The published model for (endpoint, model): from the cache, else measured (resuming ``known``) and cached."""
    cached = await trio.to_thread.run_sync(_cache_lookup, cache_path, endpoint, model)
    if cached is not None:
        method, rates = cached
        suffix = " (cached)"
    else:
        calibration = await measure_rates(client, known=known)
        method, rates = calibration.method, calibration.published(margin)
        await trio.to_thread.run_sync(_cache_store, cache_path, endpoint, model, method, rates)
        suffix = ""
    source = f"rates measured via {method} against {model} at {endpoint}{suffix}"
    return method, TokenModel(rates, source)


def _cache_key(endpoint: str, model: str) -> str:
    return json.dumps([endpoint, model], ensure_ascii=False)


def _cache_read(path: Path) -> dict[str, object]:
    """The cache's entries; empty if the file is missing, unreadable or not ours."""
    try:
        payload = as_object(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("ignoring calibration cache %s: %s", path, exc)
        return {}
    if payload is None or payload.get("version") != _CACHE_VERSION:
        return {}
    return as_object(payload.get("entries")) or {}


def _cache_lookup(path: Path, endpoint: str, model: str) -> tuple[Method, dict[ScriptClass, float]] | None:
    """Blocking: the cached (method, raw rates) of (endpoint, model), or None."""
    entry = as_object(_cache_read(path).get(_cache_key(endpoint, model)))
    rates = as_object(entry.get("rates")) if entry is not None else None
    method = entry.get("method") if entry is not None else None
    if rates is None or method not in ("tokenize", "usage slope"):
        return None
    parsed: dict[ScriptClass, float] = {}
    for cls in ScriptClass:
        value = rates.get(cls.value)
        if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            return None
        parsed[cls] = float(value)
    return ("tokenize" if method == "tokenize" else "usage slope"), parsed


def _cache_store(path: Path, endpoint: str, model: str, method: Method, rates: dict[ScriptClass, float]) -> None:
    """Blocking: add or replace one entry; write a temporary file, then ``os.replace``."""
    entries = _cache_read(path)
    entries[_cache_key(endpoint, model)] = {
        "endpoint": endpoint,
        "model": model,
        "method": method,
        "rates": {cls.value: rate for cls, rate in rates.items()},
    }
    text = json.dumps({"version": _CACHE_VERSION, "entries": entries}, indent=1, ensure_ascii=False)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8") as file:
            file.write(text + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        logger.warning("could not write calibration cache %s: %s", path, exc)
        tmp.unlink(missing_ok=True)
