"""Summaries that degrade instead of failing: LLM when it answers in time, else extractive.

:meth:`Summarizer.summarize`:

* text already within the target → returned as is (``"verbatim"``);
* up to ``single_pass_tokens`` → one LLM call;
* beyond → slices of ``slice_tokens`` summarized in order, then one merge call (if the
  slice summaries are themselves too long to merge at once, they are summarized again
  the same way).

``stop_at`` is an absolute ``trio.current_time()`` set by the tool layer (hosts kill
tool calls after 30–60 s). Every LLM request runs under ``trio.move_on_at(stop_at)``;
once it has passed no LLM work starts or continues, and what is left is done
extractively. The :class:`Summary` says which method produced the text and, in
``note``, why it degraded and how to continue. LLM results are stored through the
caller's :class:`SummaryCache` (key: sha256 of purpose, target and text), so the next
call resumes where this one stopped, even while the LLM is down.

With no client (``--no-llm``) or the breaker open, the extractive result comes at once.
Slicing and extractive scoring run in worker threads, so a large text does not stall
other calls. An :class:`~ctxtrio._errors.LLMError` never escapes; errors of
``cache.put`` do. Cancellation (beyond ``stop_at``) propagates as usual.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from functools import partial
from typing import Final, Literal, Protocol

import trio

from .._errors import LLMError, LLMTimeoutError, LLMUnavailableError
from ..text.extractive import first_sentence, summarize_extractive
from ..text.tokens import TokenModel, TokenModelRef
from ._slices import slice_text
from .client import ChatMessage, LLMClient

__all__ = ["Method", "Summarizer", "Summary", "SummaryCache"]

Method = Literal["verbatim", "llm", "extractive", "llm+extractive"]

ONE_LINER_TOKENS: Final = 48
_SYSTEM: Final = (
    "You write faithful, dense summaries. Keep identifiers, names, numbers, units, file "
    "paths, error messages, decisions and constraints verbatim. Never add anything that "
    "is not in the text. Answer with the summary only, without preamble or comments."
)
_THINK: Final = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)  # reasoning models
_CONTINUE_SLICES: Final = "call again to continue (done slices are cached)"


@dataclass(frozen=True, slots=True)
class Summary:
    """A summary, the method that produced it, and (if it degraded) why and what to do."""

    text: str
    method: Method
    note: str = ""


class SummaryCache(Protocol):
    """Where LLM results are kept between calls (the document store, typically)."""

    def get(self, key: str) -> str | None:
        """The cached text for ``key``, or None."""
        ...

    async def put(self, key: str, text: str) -> None:
        """Store ``text`` under ``key``."""
        ...


@dataclass(frozen=True, slots=True)
class _Failure:
    """Why an LLM step did not produce text: the start of a note."""

    reason: str
    deadline: bool


def cache_key(purpose: str, target_tokens: int, text: str) -> str:
    """The cache key of an LLM result: sha256 over purpose, target and text."""
    digest = hashlib.sha256(f"{purpose}\0{target_tokens}\0{text}".encode())
    return digest.hexdigest()


class Summarizer:
    """Summarizes with ``client`` (None: extractive only), estimating with ``token_ref.current``."""

    def __init__(
        self,
        client: LLMClient | None,
        token_ref: TokenModelRef,
        *,
        single_pass_tokens: int = 6000,
        slice_tokens: int = 3000,
    ) -> None:
        if not 0 < slice_tokens <= single_pass_tokens:
            raise ValueError("need 0 < slice_tokens <= single_pass_tokens")
        self._client = client
        self._ref = token_ref
        self._single_pass_tokens = single_pass_tokens
        self._slice_tokens = slice_tokens

    async def summarize(
        self,
        text: str,
        *,
        target_tokens: int,
        stop_at: float = math.inf,
        cache: SummaryCache | None = None,
    ) -> Summary:
        """Summarize ``text`` to about ``target_tokens``; never raises LLMError."""
        model = self._ref.current
        estimate = model.estimate(text)
        if estimate <= target_tokens:
            return Summary(text, "verbatim")
        if self._client is None:
            extract = await _extract(text, target_tokens, model)
            return Summary(extract, "extractive", "no LLM configured; extractive")
        if estimate <= self._single_pass_tokens:
            prompt = f"Summarize the text below in {_size(target_tokens)}."
            result = await self._llm("summary/v1", prompt, text, target_tokens, stop_at, cache)
            if isinstance(result, str):
                return Summary(await _fit(result, target_tokens, model), "llm")
            note = f"{result.reason}; extractive"
            return Summary(await _extract(text, target_tokens, model), "extractive", note)
        return await self._sliced(text, target_tokens, stop_at, cache, model)

    async def one_liner(
        self, text: str, *, stop_at: float = math.inf, cache: SummaryCache | None = None
    ) -> Summary:
        """One sentence about ``text`` (a chunk, for outlines); never raises LLMError."""
        model = self._ref.current
        if model.estimate(text) <= ONE_LINER_TOKENS and "\n" not in text.strip():
            return Summary(text.strip(), "verbatim")
        fallback = first_sentence(text, max_tokens=ONE_LINER_TOKENS, model=model)
        if self._client is None:
            return Summary(fallback, "extractive", "no LLM configured; extractive")
        if model.estimate(text) > self._single_pass_tokens:
            text = await _extract(text, self._single_pass_tokens, model)
        prompt = "Summarize the text below in one sentence of at most 30 words."
        result = await self._llm("one-liner/v1", prompt, text, ONE_LINER_TOKENS, stop_at, cache)
        if isinstance(result, str):
            return Summary(await _fit(result.splitlines()[0], ONE_LINER_TOKENS, model), "llm")
        note = f"{result.reason}; extractive"
        if result.deadline:
            note += " — call again to continue (done one-liners are cached)"
        return Summary(fallback, "extractive", note)

    async def _sliced(
        self,
        text: str,
        target_tokens: int,
        stop_at: float,
        cache: SummaryCache | None,
        model: TokenModel,
    ) -> Summary:
        slices = await trio.to_thread.run_sync(
            partial(slice_text, text, max_tokens=self._slice_tokens, model=model)
        )
        count = len(slices)
        share = math.ceil(2 * target_tokens / count)
        part_tokens = max(min(target_tokens, 100), min(self._slice_tokens // 4, share))
        parts: list[str] = []
        done = 0
        failure: _Failure | None = None
        for index, piece in enumerate(slices, start=1):
            prompt = (
                f"This is part {index} of {count} of a longer text. "
                f"Summarize this part in {_size(part_tokens)}."
            )
            result: str | _Failure
            if failure is None:
                result = await self._llm("slice/v1", prompt, piece, part_tokens, stop_at, cache)
            else:
                result = _cached(cache, "slice/v1", part_tokens, piece) or failure
            if isinstance(result, str):
                parts.append(await _fit(result, part_tokens, model))
                done += 1
            else:
                failure = result
                parts.append(await _extract(piece, part_tokens, model))
        joined = "\n\n".join(parts)
        if failure is not None:
            method: Method = "llm+extractive" if done else "extractive"
            if done:
                note = f"{failure.reason} after {done} of {count} slices; the rest extractive"
                note += f" — {_CONTINUE_SLICES}"
            else:
                note = f"{failure.reason}; extractive"
                note += f" — {_CONTINUE_SLICES}" if failure.deadline else ""
            return Summary(await _extract(joined, target_tokens, model), method, note)
        if model.estimate(joined) > self._single_pass_tokens:  # too long to merge: reduce again
            again = await self.summarize(
                joined, target_tokens=target_tokens, stop_at=stop_at, cache=cache
            )
            method = "llm+extractive" if again.method == "extractive" else again.method
            return Summary(again.text, method, again.note)
        prompt = (
            "Below are summaries of consecutive parts of one text, in order. Merge them into "
            f"one summary in {_size(target_tokens)}; keep the order, drop repetition."
        )
        merged = await self._llm("merge/v1", prompt, joined, target_tokens, stop_at, cache)
        if isinstance(merged, str):
            return Summary(await _fit(merged, target_tokens, model), "llm")
        note = f"{merged.reason} before the merge; {count} slices by LLM, merged extractively"
        note += f" — {_CONTINUE_SLICES}"
        return Summary(await _extract(joined, target_tokens, model), "llm+extractive", note)

    async def _llm(
        self,
        purpose: str,
        instruction: str,
        text: str,
        target_tokens: int,
        stop_at: float,
        cache: SummaryCache | None,
    ) -> str | _Failure:
        """The cached or freshly asked LLM result for ``text``, or why there is none."""
        cached = _cached(cache, purpose, target_tokens, text)
        if cached is not None:
            return cached
        client = self._client
        if client is None:
            return _Failure("no LLM configured", deadline=False)
        if trio.current_time() >= stop_at:
            return _Failure("deadline passed", deadline=True)
        messages = [
            ChatMessage("system", _SYSTEM),
            ChatMessage("user", f"{instruction}\n\n<text>\n{text}\n</text>"),
        ]
        answer: str | _Failure = _Failure("deadline passed", deadline=True)
        with trio.move_on_at(stop_at):
            try:
                max_tokens = target_tokens + max(64, target_tokens // 4)
                completion = await client.complete(messages, max_tokens=max_tokens)
            except LLMError as exc:
                answer = _Failure(_describe(exc), deadline=False)
            else:
                answer = _THINK.sub("", completion.text).strip() or _Failure(
                    "LLM answer unusable (only reasoning, no summary)", deadline=False
                )
        if isinstance(answer, str) and cache is not None:
            await cache.put(cache_key(purpose, target_tokens, text), answer)
        return answer


def _cached(
    cache: SummaryCache | None, purpose: str, target_tokens: int, text: str
) -> str | None:
    return cache.get(cache_key(purpose, target_tokens, text)) if cache is not None else None


def _describe(exc: LLMError) -> str:
    if isinstance(exc, LLMUnavailableError):
        return f"LLM unavailable ({exc})"
    if isinstance(exc, LLMTimeoutError):
        return f"LLM timed out ({exc})"
    return f"LLM answer unusable ({exc})"


def _size(target_tokens: int) -> str:
    return f"at most {target_tokens} tokens (about {max(1, target_tokens * 3 // 4)} words)"


async def _extract(text: str, target_tokens: int, model: TokenModel) -> str:
    """The extractive summary, computed in a worker thread (sentence scoring is CPU work)."""
    return await trio.to_thread.run_sync(
        partial(summarize_extractive, text, target_tokens=target_tokens, model=model)
    )


async def _fit(text: str, target_tokens: int, model: TokenModel) -> str:
    """An LLM answer cut to the target by sentences if it ran over (estimates lean high)."""
    if model.estimate(text) <= target_tokens:
        return text
    return await _extract(text, target_tokens, model)
