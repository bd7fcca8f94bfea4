"""What a summary call gives back, and the small helpers :mod:`.summarizer` shares with its callers.

:class:`Summary` (text, method, note), the :class:`SummaryCache` seam, how a call waits
for a background :class:`~ctxtrio.llm.jobs.Job` (:class:`Pending`, under the caller's
cancel scope), and how a finished plan is labelled. Sentence scoring is CPU work:
:func:`extract` and :func:`fit` are meant for a worker thread.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, Protocol

from .._errors import LLMError
from ..text.extractive import summarize_extractive
from .jobs import Job, describe

if TYPE_CHECKING:
    from .._progress import Progress
    from ..text.tokens import TokenModel
    from ._plan import Finished

__all__ = [
    "ONE_LINER_TOKENS", "Method", "Pending", "Summary", "SummaryCache", "Wait", "extract", "fit", "labelled",
    "short", "to_the_end",
]  # fmt: skip

Method = Literal["verbatim", "llm", "extractive", "llm+extractive"]

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


class Pending:
    """LLM work a call waits for: :meth:`wait` runs under the caller's cancel scope.

    The caller sets its deadline as a cancel scope around ``wait`` (see :data:`Wait`):
    cancelled there, the wait just ends, and the summarizer answers with what is ready
    (a stand-in for the rest) while a queued job goes on in the background worker.
    """

    def __init__(self, job: Job, *, queued: bool, progress: Progress | None) -> None:
        self.job = job
        self._queued = queued
        self._progress = progress

    async def wait(self) -> None:
        """Until the job is done: waiting for the worker, or without one doing the job here."""
        if self._queued:
            await _wait_for(self.job, self._progress)
        else:
            await _run_inline(self.job)


#: How a summary call waits for its :class:`Pending` work: the caller's cancel scope
#: around ``await pending.wait()`` (the tool layer's is ``--llm-deadline`` from the call's
#: start); :func:`to_the_end` sets none.
Wait = Callable[[Pending], Awaitable[None]]


async def to_the_end(pending: Pending) -> None:
    """Wait for ``pending`` without a deadline (library use that sets none)."""
    await pending.wait()


async def _wait_for(job: Job, progress: Progress | None) -> None:
    """Wait for ``job``, reporting each finished step to ``progress``; cancelling leaves the job queued."""
    job.waiters += 1
    try:
        while not job.done.is_set():
            await job.changed()
            if progress is not None and not job.done.is_set() and job.steps_total:
                await progress(job.steps_done, job.steps_total)
    finally:
        job.leave()


async def _run_inline(job: Job) -> None:
    """No worker: do the job inside the call (cancelling stops it where it is)."""
    try:
        job.finish(await job.work(job))
    except LLMError as exc:
        job.fail(describe(exc))


def labelled(found: Finished) -> Summary:
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
