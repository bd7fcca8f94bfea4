"""Prune dates a summary retired by a merge by the merge, as it dates a fold by the summary that folds it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ctxtrio
from ctxtrio.memory.admin.prune import prune_records

if TYPE_CHECKING:
    from pathlib import Path


async def test_a_summary_merged_after_the_cutoff_is_not_pruned(tmp_path: Path) -> None:
    """rev25's finding 5: a merged summary has no patch and no fold naming it, so prune took its creation time
    for when it was retired: 'prune --older-than 30d' removed a summary made 60 days ago and merged yesterday,
    which README promises to keep ("superseded or deleted more than D ago"), and with it what undoing the
    merge (restore on the merging summary) brings back. The merge's own time now dates it."""
    config = ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with ctxtrio.open_context(config) as ctx:
        for day in range(2):
            for n in range(12):
                await ctx.sessions.append("week", f"finding {day}.{n}: the cache missed {n} times under load {day}")
            result = await ctx.sessions.compact("week", keep_recent=2)
            assert result.summary is not None
            if day == 0:
                first = result.summary.id
        assert result.merged == (first,)
        records = await ctx.sessions.records("week")
    made = next(r["ts"] for r in records if r.get("kind") == "entry" and r.get("id") == first)
    merge = next(i for i, r in enumerate(records) if "merges" in r)
    assert isinstance(made, float)
    # The merge, and what was written after it, a day after the first summary; the cutoff between the two.
    later = [{**r, "ts": made + 86_400} if i >= merge else r for i, r in enumerate(records)]
    kept = prune_records("week", later, made + 3_600, now=made + 2 * 86_400)
    assert kept is not None  # the first day's findings, folded before the cutoff, still go
    ids = {r.get("id") for r in kept if r.get("kind") == "entry"}
    assert first in ids
    assert "e2" not in ids
