"""Summaries that degrade instead of failing, and LLM work that outlives the tool call.

:meth:`Summarizer.summarize`:

* text already within the target → returned as is (``"verbatim"``);
* no client (``--no-llm``), or the breaker open → extractive at once;
* every LLM step already finished (cache) → the LLM summary at once;
* otherwise a :class:`~ctxtrio.llm.jobs.Job` goes to the background worker
  (:class:`~ctxtrio.llm.jobs.SummaryQueue`, one request at a time) and the call waits
  for it as its ``wait`` says: the caller's cancel scope around :meth:`Pending.wait
  <._outcome.Pending.wait>` (the tool layer sets ``--llm-deadline``: hosts kill tool
  calls after 30–60 s). If it is not done by then, the call answers
  with what is ready — slice summaries the LLM finished, an extractive stand-in for
  the rest, labelled ``llm+extractive`` or ``extractive`` with a note saying how far
  the work got and to call again — while the job goes on. Each finished step is put
  in the caller's :class:`SummaryCache` (durable: the document's journal) the moment
  it is done, so the next call, or a restart, resumes where the work stopped.

Steps and prompts are in :mod:`._plan`; prompts fit the detected context window with
room for the answer. That sizing is by the estimate; a prompt whose estimate comes
near the limit is also counted with ``count_tokens`` before it is sent (exact when the
server can tokenize: one round trip, cached), and one that would leave less than the
answer's room in the window is not sent: that step is done extractively, labelled so (one step's request: :mod:`._asking`). Every answer is checked (:func:`.checks.rejection`) before it is
kept: an echo, a copy, an empty or over-long answer, changed or dropped figures count
as a failed LLM call for that step, which is then done extractively and labelled so
(never cached, never ``llm``). Without a running worker (library use that did not
start one) the job runs inside the call, under the same scope.

An :class:`~ctxtrio._errors.LLMError` never escapes; errors of ``cache.put`` do.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from functools import partial
from typing import TYPE_CHECKING, Final

import trio

from ..text.extractive import first_sentence
from ._asking import ask
from ._keeping import Rejected, as_good_as_extractive
from ._notes import one_liner_note, partial_note, rejected_note
from ._outcome import (
    ONE_LINER_TOKENS,
    Method,
    Pending,
    Summary,
    SummaryCache,
    Wait,
    extract,
    labelled,
    short,
    to_the_end,
)
from ._plan import Answer, Extract, Finished, Limits, Step, cache_key, one_liner_step, stand_in, step_count, walk
from .breaker import BreakerState
from .jobs import Job, SummaryQueue

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from .._progress import Progress
    from ..text.tokens import TokenModel, TokenModelRef
    from .client import LLMClient

__all__ = ["Method", "Pending", "Summarizer", "Summary", "SummaryCache", "Wait", "cache_key", "to_the_end"]

log = logging.getLogger("ctxtrio.summaries")

#: Assumed context window while none is detected (LM Studio's and Ollama's usual default).
DEFAULT_CONTEXT_TOKENS: Final = 4096
_FALLBACKS_KEPT: Final = 1024


class Summarizer:
    """Summarizes with ``client`` (None: extractive only), estimating with ``token_ref.current``.

    ``context_tokens()`` is the detected context window of the loaded model (None while
    unknown). :meth:`run_worker` is the background task; ``_wiring.py`` starts it.
    """

    def __init__(
        self,
        client: LLMClient | None,
        token_ref: TokenModelRef,
        *,
        single_pass_tokens: int = 6000,
        slice_tokens: int = 1500,
        context_tokens: Callable[[], int | None] = lambda: None,
        count_tokens: Callable[[str], Awaitable[int]] | None = None,
        queue: SummaryQueue | None = None,
    ) -> None:
        if not 0 < slice_tokens <= single_pass_tokens:
            raise ValueError("need 0 < slice_tokens <= single_pass_tokens")
        self._client = client
        self._ref = token_ref
        self._single_pass_tokens = single_pass_tokens
        self._slice_tokens = slice_tokens
        self._context_tokens = context_tokens
        self._count_tokens = count_tokens
        self.queue = queue if queue is not None else SummaryQueue()
        #: Extractive answers for steps whose LLM answer was rejected (not retried).
        self._fallbacks: OrderedDict[str, Answer] = OrderedDict()
        #: Why the last job gave up a step it will ask again (cut off too often): for the note.
        self._put_off: OrderedDict[str, str] = OrderedDict()

    async def run_worker(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The background worker; see :mod:`.jobs`. Runs until cancelled."""
        await self.queue.run(task_status=task_status)

    async def summarize(
        self,
        text: str,
        *,
        target_tokens: int,
        cache: SummaryCache | None = None,
        whole_extract: Extract | None = None,
        progress: Progress | None = None,
        wait: Wait = to_the_end,
    ) -> Summary:
        """Summarize ``text`` to about ``target_tokens``; never raises LLMError.

        ``whole_extract(text, target)`` replaces the plain extractive summary when no LLM
        part is ready (sessions rank decisions first). ``progress`` hears of each step
        finished while the call waits; ``wait`` is how it waits (the caller's cancel scope
        around the job; default: until it is done).
        """
        model = self._ref.current
        if model.estimate(text) <= target_tokens:
            return Summary(text, "verbatim")
        whole: Extract = whole_extract or partial(extract, model=model)
        if self._client is None:
            return await _extracted(whole, text, target_tokens, "no LLM configured; extractive")
        limits = self._limits(target_tokens)
        lookup = self._lookup(cache, None)
        found = await trio.to_thread.run_sync(walk, text, target_tokens, limits, model, lookup)
        if isinstance(found, Finished):
            return await as_good_as_extractive(found, text, target_tokens, whole)
        if self._client.breaker_state is BreakerState.OPEN:
            note = "LLM unavailable (breaker open after a failure); extractive"
            return await _extracted(whole, text, target_tokens, note)
        key = cache_key("job/v2", target_tokens, text)
        job: Job | None = self.queue.find(key) or Job(
            key, partial(self._run_job, text, target_tokens, limits, model, cache), durable=cache is not None
        )
        assert job is not None
        pending = self._submit(job, progress)
        if pending is None:
            note = "the summary queue is full; extractive — call again later"
            return await _extracted(whole, text, target_tokens, note)
        await wait(pending)
        job = pending.job
        if job.result is not None:
            return await as_good_as_extractive(job.result, text, target_tokens, whole)
        return await self._partial(job, text, target_tokens, limits, model, cache, whole)

    async def extractive(self, text: str, *, target_tokens: int, whole_extract: Extract, note: str) -> Summary:
        """``text`` within ``target_tokens`` without asking the LLM: as it is when it fits, else
        ``whole_extract(text, target_tokens)`` (in a thread), labelled extractive with ``note``."""
        if self._ref.current.estimate(text) <= target_tokens:
            return Summary(text, "verbatim")
        return await _extracted(whole_extract, text, target_tokens, note)

    @property
    def uses_llm(self) -> bool:
        """Whether summaries are asked of an LLM at all (False with ``--no-llm``)."""
        return self._client is not None

    async def resume(self, text: str, *, target_tokens: int, cache: SummaryCache) -> Summary | None:
        """The summary of ``text`` once every step is done (labelled as :meth:`summarize` does); else None.

        It does not wait: when steps are missing and the worker runs, the job is put
        back on the queue (or found there) so the work goes on from what ``cache`` keeps
        — the way a compaction whose summary was not ready in time is finished by a
        later call, or after a restart. A summary is ``llm`` only if every step was.
        """
        model = self._ref.current
        if self._client is None or model.estimate(text) <= target_tokens:
            return None
        limits = self._limits(target_tokens)
        found = await trio.to_thread.run_sync(walk, text, target_tokens, limits, model, self._lookup(cache, None))
        if isinstance(found, Finished):
            return labelled(found)
        key = cache_key("job/v2", target_tokens, text)
        if self.queue.running and self._client.breaker_state is not BreakerState.OPEN and self.queue.find(key) is None:
            self.queue.submit(Job(key, partial(self._run_job, text, target_tokens, limits, model, cache), durable=True))
        return None

    async def one_liner(self, text: str, *, cache: SummaryCache | None = None, wait: Wait = to_the_end) -> Summary:
        """One sentence about ``text``: :meth:`one_liners` of one text."""
        return (await self.one_liners([text], cache=cache, wait=wait))[0]

    async def one_liners(
        self,
        texts: Sequence[str],
        *,
        cache: SummaryCache | None = None,
        progress: Progress | None = None,
        job_key: str | None = None,
        wait: Wait = to_the_end,
        fresh: Sequence[str] | None = None,
        prose: bool = False,
    ) -> list[Summary]:
        """One sentence about each of ``texts`` (chunks, for outlines); never raises LLMError.

        ``prose``: the texts are of a document of prose (not source code), so an extractive line
        passes over the code a text opens with (:func:`~ctxtrio.text.extractive.first_sentence`).

        ``fresh``: each text without what the text before it said already (a chunk's overlap),
        where an extractive line is taken from (else from ``texts``): the first sentence of an
        overlap is the chunk before's.

        The ones not cached yet are one background job (one request per text, each kept
        in ``cache`` the moment it is checked), waited for by ``wait`` like
        :meth:`summarize`; past its deadline the rest are the texts' first sentences, labelled
        ``extractive`` with a note, while the job goes on. With ``job_key`` (a document's
        outline) there is one such job per key at a time: a call while it runs joins it,
        whatever it was asked for, instead of queueing one more for what is still missing
        (16 repeated calls filled the queue); what it did not cover comes with the next call.
        """
        model = self._ref.current
        leads = texts if fresh is None else [part or text for part, text in zip(fresh, texts, strict=True)]
        fallbacks = await trio.to_thread.run_sync(_first_sentences, leads, model, prose)
        if self._client is None:
            return [
                short(text, model) or Summary(line, "extractive", "no LLM configured; extractive")
                for text, line in zip(texts, fallbacks, strict=True)
            ]
        steps = [await self._one_liner_step(text, model) for text in texts]
        answers = self._lookup(cache, None)
        missing = [step for step in steps if step is not None and answers(step.key) is None]
        job: Job | None = None
        reason = "deadline passed"
        if missing and self._client.breaker_state is BreakerState.OPEN:
            reason = "LLM unavailable (breaker open after a failure)"
        elif missing:
            key = job_key or cache_key("one-liners/v3", len(missing), "\0".join(step.key for step in missing))
            job = self.queue.find(key) or Job(
                key, partial(self._run_one_liners, missing, model, cache), durable=cache is not None
            )
            pending = self._submit(job, progress)
            if pending is None:
                job, reason = None, "the summary queue is full"
            else:
                await wait(pending)
                job = pending.job
            if job is not None and job.failure is not None:
                reason = job.failure
        later = job is not None and job.result is None and job.failure is None and job.durable and self.queue.running
        results = []
        for text, step, line in zip(texts, steps, fallbacks, strict=True):
            found = answers(step.key) if step is not None else None
            if step is None:
                results.append(short(text, model) or Summary(line, "verbatim"))
            elif found is not None and found.by_llm:
                results.append(Summary(found.text, "llm"))
            elif found is not None:
                results.append(Summary(line, "extractive", rejected_note(found.why)))
            else:
                note = one_liner_note(step.key, job, self._put_off, later=later, missing=len(missing), reason=reason)
                results.append(Summary(line, "extractive", note))
        return results

    def _submit(self, job: Job, progress: Progress | None) -> Pending | None:
        """``job`` for the worker (None: the queue is full), or, with no worker running, to do in the call."""
        if not self.queue.running:
            return Pending(job, queued=False, progress=progress)
        queued = self.queue.submit(job)
        return Pending(queued, queued=True, progress=progress) if queued is not None else None

    async def _one_liner_step(self, text: str, model: TokenModel) -> Step | None:
        """The request for ``text``'s one-liner (None: the text is one short line already)."""
        if short(text, model) is not None:
            return None
        limits = self._limits(ONE_LINER_TOKENS)
        if model.estimate(text) > limits.single_pass_tokens:
            text = await trio.to_thread.run_sync(extract, text, limits.single_pass_tokens, model)
        return one_liner_step(text, ONE_LINER_TOKENS)

    async def _run_one_liners(
        self, steps: list[Step], model: TokenModel, cache: SummaryCache | None, job: Job
    ) -> Finished:
        """Ask for each one-liner still missing, keeping each as soon as it is checked."""
        job.steps_total = len(steps)
        answers = self._lookup(cache, None)
        done = 0
        for step in steps:
            started = trio.current_time()
            if answers(step.key) is None:
                answer = await self._ask(step, model, one_line=True)
                self._put_off.pop(step.key, None)
                if isinstance(answer, str):
                    line = answer  # exactly the text the checks passed
                    if cache is not None:
                        await cache.put(step.key, line)
                    else:
                        self._remember(step.key, Answer(line, True))
                    done += 1
                elif answer.retry:  # asked again by the next call; until then the note says why
                    self._put_off[step.key] = answer.reason
                    while len(self._put_off) > _FALLBACKS_KEPT:
                        self._put_off.popitem(last=False)
                else:
                    self._remember(step.key, Answer("", False, answer.reason))
            job.step_finished(trio.current_time() - started)
        return Finished("", done, len(steps))

    # -- the job ------------------------------------------------------------------------

    async def _run_job(
        self, text: str, target_tokens: int, limits: Limits, model: TokenModel, cache: SummaryCache | None, job: Job
    ) -> Finished:
        """Do the steps still missing, in order, keeping each one as soon as it is done."""
        answers: dict[str, Answer] = {}
        lookup = self._lookup(cache, answers)
        job.steps_total = await trio.to_thread.run_sync(step_count, text, target_tokens, limits, model)
        while True:
            found = await trio.to_thread.run_sync(walk, text, target_tokens, limits, model, lookup)
            if isinstance(found, Finished):
                return found
            started = trio.current_time()
            answer = await self._ask(found, model)
            if isinstance(answer, Rejected):
                log.info("summary step rejected (%s): extractive for it", answer.reason)
                stand = await trio.to_thread.run_sync(extract, found.text, found.target_tokens, model)
                answers[found.key] = Answer(stand, False, answer.reason)
                if not answer.retry:  # an interrupted step is asked again by the next job
                    self._remember(found.key, answers[found.key])
            else:
                answers[found.key] = Answer(answer, True)
                if cache is not None:
                    await cache.put(found.key, answer)
            job.step_finished(trio.current_time() - started)

    async def _ask(self, step: Step, model: TokenModel, *, one_line: bool = False) -> str | Rejected:
        """One streamed request for ``step`` (:func:`._asking.ask`)."""
        assert self._client is not None
        window = self._context_tokens()
        return await ask(self._client, step, model, window=window, count_tokens=self._count_tokens, one_line=one_line)

    async def _partial(
        self,
        job: Job,
        text: str,
        target_tokens: int,
        limits: Limits,
        model: TokenModel,
        cache: SummaryCache | None,
        whole: Extract,
    ) -> Summary:
        """What the caller gets while the job is unfinished or failed: labelled, with a note."""
        built = await trio.to_thread.run_sync(
            stand_in, text, target_tokens, limits, model, self._lookup(cache, None), partial(extract, model=model)
        )
        summary, done, parts = built
        if not done:
            summary = await trio.to_thread.run_sync(whole, text, target_tokens)
        method: Method = "llm+extractive" if done else "extractive"
        return Summary(summary, method, partial_note(job, self.queue, done=done, parts=parts))

    def _lookup(self, cache: SummaryCache | None, answers: dict[str, Answer] | None) -> Callable[[str], Answer | None]:
        def lookup(key: str) -> Answer | None:
            if answers is not None and key in answers:
                return answers[key]
            text = cache.get(key) if cache is not None else None
            if text is not None:
                return Answer(text, True)
            return self._fallbacks.get(key)

        return lookup

    def _remember(self, key: str, answer: Answer) -> Answer:
        self._fallbacks[key] = answer
        while len(self._fallbacks) > _FALLBACKS_KEPT:
            self._fallbacks.popitem(last=False)
        return answer

    def _limits(self, target_tokens: int) -> Limits:
        context = self._context_tokens() or DEFAULT_CONTEXT_TOKENS
        return Limits.fitting(context, target_tokens, single_pass=self._single_pass_tokens, slice_=self._slice_tokens)


def _first_sentences(texts: Sequence[str], model: TokenModel, prose: bool) -> list[str]:
    """Each text's first sentence, its one-liner's stand-in. Run in a thread: an outline's 200 chunks (the
    default, 500 at most) take 40-60 ms of CPU, and with them the event loop did."""
    return [first_sentence(text, max_tokens=ONE_LINER_TOKENS, model=model, past_code=prose) for text in texts]


async def _extracted(whole: Extract, text: str, target_tokens: int, note: str) -> Summary:
    """``whole(text, target_tokens)``, run in a thread (it reads the whole text), labelled extractive with ``note``."""
    return Summary(await trio.to_thread.run_sync(whole, text, target_tokens), "extractive", note)
