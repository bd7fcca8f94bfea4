"""The one deadline of a tool call that asks the LLM: ``--llm-deadline``, as a cancel scope here.

Hosts end a tool call after 30–60 s, while a summary may take minutes. So the tools
that summarize (``doc_summarize``, ``doc_outline summarize=true``, ``context_compact``)
set the deadline where the call starts, and the services hand it, as the ``wait`` of
:meth:`~ctxtrio.llm.summarizer.Summarizer.summarize`, to the one place that waits: the
scope covers ``await pending.wait()`` only. When it expires the wait ends (the work goes
on in the background worker), and the summarizer builds the answer from what is ready
after the scope, so nothing past the wait (the stand-in, the journal write of a
compaction) is cut short. Nothing to translate: an expired wait is no error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import trio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .._wiring import Wiring

__all__ = ["Waitable", "llm_deadline"]


class Waitable(Protocol):
    """LLM work a call waits for (``ctxtrio.llm.summarizer.Pending``)."""

    async def wait(self) -> None: ...


def llm_deadline(ctx: Wiring) -> Callable[[Waitable], Awaitable[None]]:
    """The wait for this call's LLM work: ``--llm-deadline`` from now, the call's set-up included."""
    deadline = trio.current_time() + ctx.config.llm_deadline_s

    async def wait(pending: Waitable) -> None:
        with trio.move_on_at(deadline):
            await pending.wait()

    return wait
