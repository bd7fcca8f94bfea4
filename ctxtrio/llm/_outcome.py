"""What a summary call gives back, and the small helpers :mod:`.summarizer` shares with its callers.

:class:`Summary` (text, method, note), the :class:`SummaryCache` seam, how a call waits
for a background :class:`~ctxtrio.llm.jobs.Job` (:func:`wait_for`, or :func:`run_inline`
without a worker), and how a finished plan is labelled. Sentence scoring is CPU work:
:func:`extract` and :func:`fit` are meant for a worker thread.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, Protocol

import trio

from .._errors import LLMError
from ..text.extractive import summarize_extractive
from .jobs import Job, describe

if TYPE_CHECKING:
    from ..text.tokens import TokenModel
    from ._plan import Final as FinalSummary

__all__ = [
    "ONE_LINER_TOKENS", "Method", "Progress", "Summary", "SummaryCache", "extract", "fit", "labelled", "run_inline",
    "short", "wait_for",
]  # fmt: skip

Method = Literal["verbatim", "llm", "extractive", "llm+extractive"]
#: ``progress(done, total)``: an MCP progress notification (a no-op without a progress token).
Progress = Callable[[float, float], Awaitable[None]]

ONE_LINER_TOKENS: Final = 48


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
        """Store ``text`` under ``key`` (durably, before returning)."""
        ...


async def wait_for(job: Job, stop_at: float, progress: Progress | None) -> None:
    """Wait for ``job`` until ``stop_at``, reporting each finished step to ``progress``."""
    job.waiters += 1
    try:
        with trio.move_on_at(stop_at):
            while not job.done.is_set():
                await job.changed()
                if progress is not None and not job.done.is_set() and job.steps_total:
                    await progress(job.steps_done, job.steps_total)
    finally:
        job.leave()


async def run_inline(job: Job, stop_at: float) -> None:
    """No worker: do the job inside the call, until ``stop_at``."""
    with trio.move_on_at(stop_at):
        try:
            job.finish(await job.work(job))
        except LLMError as exc:
            job.fail(describe(exc))


def labelled(found: FinalSummary) -> Summary:
    if found.llm_steps == found.steps:
        return Summary(found.text, "llm")
    why = "; ".join(found.why[:2])
    if found.llm_steps:
        note = f"the LLM's answer for {found.steps - found.llm_steps} of {found.steps} steps was rejected ({why}); those are extractive"
        return Summary(found.text, "llm+extractive", note)
    return Summary(found.text, "extractive", f"LLM answer rejected ({why}); extractive")


def short(text: str, model: TokenModel) -> Summary | None:
    """A text that is one short line already is its own one-liner."""
    if model.estimate(text) <= ONE_LINER_TOKENS and "\n" not in text.strip():
        return Summary(text.strip(), "verbatim")
    return None


def extract(text: str, target_tokens: int, model: TokenModel) -> str:
    """The extractive summary (sentence scoring is CPU work: call it in a worker thread)."""
    return summarize_extractive(text, target_tokens=target_tokens, model=model)


def fit(text: str, target_tokens: int, model: TokenModel) -> str:
    """An LLM answer cut to the target by sentences if it ran over (estimates lean high)."""
    if model.estimate(text) <= target_tokens:
        return text
    return summarize_extractive(text, target_tokens=target_tokens, model=model)
