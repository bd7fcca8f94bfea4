"""Extractive compaction through the session service keeps every decision (issue 10's Must show)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ctxtrio
from ctxtrio._config import Config
from ctxtrio.text.tokens import TokenModel
from tests.text.test_entries import DECISIONS, session

if TYPE_CHECKING:
    from pathlib import Path


async def test_extractive_compaction_keeps_all_eight_decisions(tmp_path: Path) -> None:
    """8 decisions among 30 routine lines, compacted with no LLM: the summary entry holds all 8."""
    async with ctxtrio.open_context(Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as ctx:
        ctx.live.tokens.current = TokenModel.flat()  # the target was sized with the single-ratio model
        result = await _compacted(ctx)
    assert result.method == "extractive" and result.summary is not None
    for decision in DECISIONS:
        if decision.pinned:
            continue  # pinned entries are never folded: they stay live as they are
        assert decision.text in result.summary.text, decision.text
    assert "(×18)" in result.summary.text


async def _compacted(ctx: ctxtrio.Context) -> ctxtrio.CompactResult:
    for entry in session():
        await ctx.sessions.append("work", entry.text, role=entry.role, tags=list(entry.tags), pinned=entry.pinned)  # type: ignore[arg-type]  # roles of the fixture are valid Role values
    return await ctx.sessions.compact("work", keep_recent=0, target_tokens=160)
