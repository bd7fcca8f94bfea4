"""LLM deadlines for library calls in tests and stress scripts, set as the tool layer sets them.

``until(t)`` is the ``wait`` a tool call passes (``ctxtrio.tools.deadline``): a cancel
scope ending at ``t`` (a ``trio.current_time()``) around the wait for the summarizer's
work. ``deadline_of(wait)`` tells which deadline a ``wait`` sets, without waiting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from ctxtrio.llm._plan import Finished
from ctxtrio.llm.jobs import Job
from ctxtrio.llm.summarizer import Pending

if TYPE_CHECKING:
    from ctxtrio.llm.summarizer import Wait

__all__ = ["deadline_of", "until"]


def until(deadline: float) -> Wait:
    """Wait for the summarizer's work until ``deadline``, then take what is ready."""

    async def wait(pending: Pending) -> None:
        with trio.move_on_at(deadline):
            await pending.wait()

    return wait


async def deadline_of(wait: Wait) -> float:
    """The deadline ``wait`` sets around the work it waits for (inf: none), seen from inside that work."""
    seen: list[float] = []

    async def note(job: Job) -> Finished:
        seen.append(trio.current_effective_deadline())
        return Finished("", 0, 0)

    await wait(Pending(Job("deadline probe", note, durable=False), queued=False, progress=None))
    return seen[0]
