"""A merging compaction and a single restore racing it: the restored entry is neither folded nor summarized."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxtrio._config import Config
from ctxtrio._errors import InputError
from ctxtrio._wiring import open_wiring
from ctxtrio.memory.service import SessionService
from tests.memory.doubles import HookedSummarizer

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._wiring import Wiring
    from ctxtrio.llm.summarizer import Wait


class _RestoreWhileSummarizing(HookedSummarizer):
    """Extractive; while the summary is made (after the plan, outside the session's lock, as a restore
    from another task or process lands then), restores ``entry_id`` if one is set."""

    def __init__(self, ctx: Wiring) -> None:
        super().__init__(ctx)
        self.service: SessionService | None = None
        self.entry_id: str | None = None

    async def before(self, wait: Wait) -> None:
        if self.service is not None and self.entry_id is not None:
            await self.service.update("week", self.entry_id, restore=True)


async def test_restoring_an_entry_of_the_merged_summary_while_merging_refuses_the_merge(tmp_path: Path) -> None:
    """rev25's finding 4: a restore of an entry the earlier summary folds, landing while the merge's extract
    ran, passed plan.still_foldable (the entry was live, as a candidate is); the merged summary then held its
    text but did not fold it, so it was live and summarized twice over, and CompactResult.folded named it.
    Now the merge is refused as any change meanwhile is, and the entry stays live and out of the summary."""
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx:
        summarizer = _RestoreWhileSummarizing(ctx)
        service = SessionService(ctx.store, ctx.live, summarizer)
        summarizer.service = service
        for n in range(12):
            await service.append("week", f"finding 0.{n}: the cache missed {n} times under load")
        first = await service.compact("week", keep_recent=2)
        assert first.summary is not None and "e3" in first.folded
        for n in range(12):
            await service.append("week", f"finding 1.{n}: the queue held {n} requests at peak")
        summarizer.entry_id = "e3"
        with pytest.raises(InputError, match="changed while compacting"):
            await service.compact("week", keep_recent=2)
        entries = {entry.id: entry for entry in await service.export("week")}
        status = await service.status("week")
    assert entries["e3"].status == "live"
    assert entries[first.summary.id].status == "live"  # still the one summary, folding the rest
    assert status.summaries == 1
