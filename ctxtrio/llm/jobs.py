"""The background summary worker: LLM summaries that outlive the tool call asking for them.

:meth:`SummaryQueue.run` is one long-lived task in ``open_context``'s background
nursery (started with ``nursery.start``; it reports itself usable at once). It takes
:class:`Job` s from a bounded channel and works them one at a time, so at most one
summary request is with the model (the client's limiter would queue a second anyway,
and a slow local model only gets slower when asked twice at once). A tool call submits
a job, waits for it until its own deadline, then answers with what is ready while the
job goes on; every finished step is written to the job's durable cache as it is done,
so the next call, or a restart, resumes from there.

* Submitting a job already queued or running returns that job (one per key).
* A full queue refuses the job (``submit`` returns None): the caller answers
  extractively and says so. Nothing waits for room.
* A job whose results have nowhere durable to go (no cache) is dropped when its last
  waiter gives up (:meth:`Job.leave`): nobody could ever collect it.
* An :class:`~ctxtrio._errors.LLMError` ends the job as failed, with the reason; the
  next call submits it again (and fails fast while the breaker is open).
* Cancellation (shutdown cancels the background nursery) stops the step in flight —
  its streamed request is closed, so the model stops generating — and every job
  still known is marked failed so no waiter is left hanging. Finished steps are
  already durable; nothing else needs saving.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

import trio

from .._errors import LLMError, LLMTimeoutError, LLMUnavailableError
from ._plan import Finished

__all__ = ["Job", "SummaryQueue"]

QUEUE_SIZE: Final = 16
_SHUTDOWN: Final = "the server is shutting down; call again after it restarts"


@dataclass(eq=False)
class Job:
    """One summary to produce in the background, and what has become of it so far."""

    key: str
    work: Callable[[Job], Awaitable[Finished]]
    durable: bool
    steps_done: int = 0
    steps_total: int = 0
    seconds_per_step: float | None = None
    result: Finished | None = None
    failure: str | None = None
    waiters: int = 0
    abandoned: bool = False
    done: trio.Event = field(default_factory=trio.Event)
    _changed: trio.Event = field(default_factory=trio.Event)
    _scope: trio.CancelScope = field(default_factory=trio.CancelScope)

    def step_finished(self, seconds: float) -> None:
        """Count a finished step (for progress and the time estimate) and wake waiters."""
        self.steps_done += 1
        previous = self.seconds_per_step
        self.seconds_per_step = seconds if previous is None else (previous + seconds) / 2
        self._poke()

    def finish(self, result: Finished) -> None:
        self.result = result
        self.done.set()
        self._poke()

    def fail(self, reason: str) -> None:
        if not self.done.is_set():
            self.failure = reason
            self.done.set()
            self._poke()

    async def changed(self) -> None:
        """Wait until a step finishes or the job ends."""
        await self._changed.wait()

    def leave(self) -> None:
        """A waiter is gone; if the job is unfinished, the last one drops a job that keeps nothing durable."""
        self.waiters -= 1
        if self.waiters <= 0 and not self.durable and not self.done.is_set():
            self.abandoned = True
            self._scope.cancel()
            self.fail("abandoned: nobody waits for it and it has nowhere to keep results")

    def _poke(self) -> None:
        self._changed.set()
        self._changed = trio.Event()


class SummaryQueue:
    """A bounded queue of summary jobs and the one task that works them."""

    def __init__(self, size: int = QUEUE_SIZE) -> None:
        self._send, self._recv = trio.open_memory_channel[Job](size)
        self._jobs: dict[str, Job] = {}
        self.running = False

    def find(self, key: str) -> Job | None:
        """The job for ``key`` if one is queued or running."""
        return self._jobs.get(key)

    def ahead(self, job: Job) -> int:
        """How many jobs submitted before ``job`` are still queued or running (jobs are worked in that order)."""
        for position, key in enumerate(self._jobs):
            if key == job.key:
                return position
        return 0

    def submit(self, job: Job) -> Job | None:
        """Queue ``job`` (or return the one already there for its key); None when full."""
        existing = self._jobs.get(job.key)
        if existing is not None:
            return existing
        try:
            self._send.send_nowait(job)
        except trio.WouldBlock:
            return None
        self._jobs[job.key] = job
        return job

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Work jobs one at a time until cancelled; then fail whatever is left."""
        self.running = True
        task_status.started()
        try:
            async with self._recv:
                async for job in self._recv:
                    await self._work(job)
        finally:
            self.running = False
            for job in self._jobs.values():
                job.fail(_SHUTDOWN)
            self._jobs.clear()

    async def _work(self, job: Job) -> None:
        try:
            if job.abandoned:
                return
            with job._scope:
                try:
                    job.finish(await job.work(job))
                except LLMError as exc:
                    job.fail(describe(exc))
        finally:
            self._jobs.pop(job.key, None)
            job.fail(_SHUTDOWN)  # only if cancelled from outside: a finished job stays finished


def describe(exc: LLMError) -> str:
    """A short reason for a note: what kind of failure, and the client's message."""
    if isinstance(exc, LLMUnavailableError):
        return f"LLM unavailable ({exc})"
    if isinstance(exc, LLMTimeoutError):
        return f"LLM timed out ({exc})"
    return f"LLM answer unusable ({exc})"
