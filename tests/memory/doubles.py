"""Test doubles shared by the session tests."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ctxtrio.llm.summarizer import Progress, Summarizer, Summary, SummaryCache

if TYPE_CHECKING:
    from ctxtrio._context import Context
    from ctxtrio.llm._plan import Extract


class RecordingSummarizer(Summarizer):
    """Extractive, but remembers the deadline it was given."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(None, ctx.live.tokens)
        self.stop_at: list[float] = []

    async def summarize(
        self,
        text: str,
        *,
        target_tokens: int,
        stop_at: float = math.inf,
        cache: SummaryCache | None = None,
        whole_extract: Extract | None = None,
        progress: Progress | None = None,
    ) -> Summary:
        self.stop_at.append(stop_at)
        return await super().summarize(
            text,
            target_tokens=target_tokens,
            stop_at=stop_at,
            cache=cache,
            whole_extract=whole_extract,
            progress=progress,
        )
