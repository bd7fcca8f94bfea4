"""Test doubles shared by the session tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.llm.summarizer import Summarizer, Summary, SummaryCache, Wait, to_the_end
from testkit.deadlines import deadline_of

if TYPE_CHECKING:
    from ctxtrio._progress import Progress
    from ctxtrio._wiring import Wiring
    from ctxtrio.llm._plan import Extract


class HookedSummarizer(Summarizer):
    """Extractive, with :meth:`before` awaited ahead of each summary (a double overrides only that)."""

    def __init__(self, ctx: Wiring) -> None:
        super().__init__(None, ctx.live.tokens)

    async def before(self, wait: Wait) -> None:
        """Called with the summary's ``wait`` before it is made."""

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
        await self.before(wait)
        return await super().summarize(
            text,
            target_tokens=target_tokens,
            cache=cache,
            whole_extract=whole_extract,
            progress=progress,
            wait=wait,
        )


class RecordingSummarizer(HookedSummarizer):
    """Extractive, but remembers the deadline its ``wait`` sets."""

    def __init__(self, ctx: Wiring) -> None:
        super().__init__(ctx)
        self.stop_at: list[float] = []

    async def before(self, wait: Wait) -> None:
        self.stop_at.append(await deadline_of(wait))
