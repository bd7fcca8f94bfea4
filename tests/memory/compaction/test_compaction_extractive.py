"""Extractive compaction through the session service keeps every decision (issue 10's Must show)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio
import trio.testing

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.text.tokens import TokenModel
from tests.llm.fake_stream import FakeModel, open_fake_model
from tests.memory.compaction.test_compaction_resume import sessions
from tests.text.test_entries import DECISIONS, session

if TYPE_CHECKING:
    from pathlib import Path

    import ctxtrio
    from ctxtrio._wiring import Wiring


async def test_extractive_compaction_keeps_all_eight_decisions(tmp_path: Path) -> None:
    """8 decisions among 30 routine lines, compacted with no LLM: the summary entry holds all 8."""
    async with open_wiring(Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as ctx:
        ctx.live.tokens.current = TokenModel.flat()  # the target was sized with the single-ratio model
        result = await _compacted(ctx)
    assert result.method == "extractive" and result.summary is not None
    for decision in DECISIONS:
        if decision.pinned:
            continue  # pinned entries are never folded: they stay live as they are
        assert decision.text in result.summary.text, decision.text
    assert "(×18)" in result.summary.text


async def _compacted(ctx: Wiring) -> ctxtrio.CompactResult:
    for entry in session():
        await ctx.sessions.append("work", entry.text, role=entry.role, tags=list(entry.tags), pinned=entry.pinned)  # type: ignore[arg-type]  # roles of the fixture are valid Role values
    return await ctx.sessions.compact("work", keep_recent=0, target_tokens=160)


async def test_a_rejected_llm_compaction_keeps_all_eight_decisions(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """The model's answer invents figures and is rejected: the compaction falls back to the
    decisions-first extractor, as --no-llm does (it fell back to the generic one: 5 of 6 kept)."""
    async with (
        trio.open_nursery() as nursery,
        open_wiring(Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as ctx,
    ):
        ctx.live.tokens.current = TokenModel.flat()
        model = await open_fake_model(nursery, FakeModel(behaviour="invent", tokens_per_event=8))
        async with sessions(ctx, model) as service:
            for entry in session():
                await service.append("work", entry.text, role=entry.role, tags=list(entry.tags), pinned=entry.pinned)  # type: ignore[arg-type]  # roles of the fixture are valid Role values
            result = await service.compact("work", keep_recent=0, target_tokens=160)
        nursery.cancel_scope.cancel()
    assert model.served and result.method == "extractive" and "rejected" in result.note
    assert result.summary is not None
    for decision in DECISIONS:
        if not decision.pinned:
            assert decision.text in result.summary.text, decision.text


async def test_a_compaction_of_measurements_keeps_them_and_the_undo_every_note(tmp_path: Path) -> None:
    """user27: 75 notes "alpha note i: measured 7i ms" compacted to "... (×38)" lines kept none of the
    measurements (only the undo had them). The summary now states every one, and the undo still brings back
    each note as written."""
    async with open_wiring(Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as ctx:
        for i in range(1, 76):
            await ctx.sessions.append("alpha", f"alpha note {i}: measured {7 * i} ms")
        result = await ctx.sessions.compact("alpha", keep_recent=0, target_tokens=400)
        assert result.summary is not None and len(result.folded) == 75
        assert result.summary.text == "alpha note [1..75]: measured [7..525 step 7] ms (×75)"
        assert result.tokens_after <= 400
        undone = await ctx.sessions.update("alpha", result.summary.id, restore=True)
        assert undone.restored == result.folded
        texts = [entry.text for entry in await ctx.sessions.export("alpha") if entry.status == "live"]
    assert texts == [f"alpha note {i}: measured {7 * i} ms" for i in range(1, 76)]
