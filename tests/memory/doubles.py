"""Test doubles shared by the session tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.llm.summarizer import Summarizer, Summary, SummaryCache, Wait, to_the_end
from testkit.deadlines import deadline_of

if TYPE_CHECKING:
    from ctxtrio._context import Context
    from ctxtrio._progress import Progress
    from ctxtrio.llm._plan import Extract


class RecordingSummarizer(Summarizer):
    """Extractive, but remembers the deadline its ``wait`` sets."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(None, ctx.live.tokens)
        self.stop_at: list[float] = []

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
        self.stop_at.append(await deadline_of(wait))
        return await super().summarize(
            text,
            target_tokens=target_tokens,
            cache=cache,
            whole_extract=whole_extract,
            progress=progress,
            wait=wait,
        )
