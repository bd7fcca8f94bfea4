"""Answers checked by an estimate say "estimated" in their accounting; exact ones do not (issue 22)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import pytest

from ctxtrio._live import EstimateCounter
from ctxtrio.docs.render import render_search, render_window
from ctxtrio.memory.render import render_recalled

from .conftest import opened

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ctxtrio._wiring import Wiring

_T = TypeVar("_T")
TEXT = "\n\n".join(f"Section {n}. The pump at station {n} was serviced on day {n * 3}." for n in range(200))


class ExactCounter(EstimateCounter):
    """Counts as the estimate does, but reports every final count as the tokenizer's (a server that counts)."""

    async def fit_counted(
        self, budget_tokens: int, build: Callable[[int], _T], text_of: Callable[[_T], str]
    ) -> tuple[_T, int, bool]:
        """As EstimateCounter.fit, reported exact."""
        result, tokens = await self.fit(budget_tokens, build, text_of)
        return result, tokens, True


async def answers(ctx: Wiring, budget: int) -> dict[str, str]:
    """doc_window, the chunk-range read, doc_search and context_recall of the same text at ``budget``."""
    await ctx.documents.ingest(text=TEXT, doc_id="d")
    await ctx.sessions.open("s")
    for section in TEXT.split("\n\n")[:40]:
        await ctx.sessions.append("s", section)
    return {
        "window": render_window(await ctx.documents.window("d", budget_tokens=budget)),
        "read": render_window(await ctx.documents.read("d", 0, 50, budget_tokens=budget)),
        "search": render_search(await ctx.documents.search("pump station", doc_id="d", budget_tokens=budget)),
        "recall": render_recalled(await ctx.sessions.recall("s", budget_tokens=budget)),
    }


@pytest.mark.parametrize("budget", [300, 1000])
async def test_estimated_answers_say_so_and_the_mark_is_inside_the_budget(tmp_path: Path, budget: int) -> None:
    """Without a tokenizer every answer says "(N tokens, estimated)", counted within its budget."""
    async with opened(tmp_path) as ctx:
        shown = await answers(ctx, budget)
        model = ctx.live.tokens.current
    for name, text in shown.items():
        assert "tokens, estimated)" in text, name
        assert model.estimate(text) <= budget, (name, model.estimate(text))


async def test_exact_answers_carry_no_estimated_mark(tmp_path: Path) -> None:
    """When the server's tokenizer counted the final answer, none of them says "estimated"."""
    async with opened(tmp_path) as ctx:
        ctx.live.counter = ExactCounter(ctx.live.tokens)
        shown = await answers(ctx, 1000)
    for name, text in shown.items():
        assert "estimated" not in text, name
