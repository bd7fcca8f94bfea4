"""Two processes compacting one session: the decision is made under the journal's lock (issue 11: W2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from ctxtrio._config import Config
from ctxtrio._errors import InputError
from ctxtrio._wiring import open_wiring
from ctxtrio.memory.service import SessionService
from ctxtrio.store.reading import read_journal
from ctxtrio.tools.advice import advised
from tests.memory.doubles import HookedSummarizer

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._wiring import Wiring
    from ctxtrio.llm.summarizer import Wait


class _Rendezvous(HookedSummarizer):
    """Extractive, but returns only once both compactions are summarizing: both have planned."""

    def __init__(self, ctx: Wiring, arrived: list[int], both: trio.Event) -> None:
        super().__init__(ctx)
        self._arrived = arrived
        self._both = both

    async def before(self, wait: Wait) -> None:
        self._arrived[0] += 1
        if self._arrived[0] == 2:
            self._both.set()
        await self._both.wait()


async def test_two_processes_compacting_one_session_fold_once(tmp_path: Path) -> None:
    """Both plan the same fold at once; exactly one summary is written, the other is told to call again.

    Two contexts on one data dir stand for two processes: each has its own store writer,
    journal descriptors and in-memory state, and flock(2) locks belong to the open file
    description, so two descriptors of one file exclude each other as two processes do.
    """
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with open_wiring(config) as a, open_wiring(config) as b:
        for n in range(12):
            await a.sessions.append("s1", f"Step {n}: tried option {n}; it failed with code {n * 3}.")
        arrived, both = [0], trio.Event()
        services = [SessionService(ctx.store, ctx.live, _Rendezvous(ctx, arrived, both)) for ctx in (a, b)]
        outcomes: list[str] = []
        advice: list[str] = []

        async def compact(service: SessionService) -> None:
            try:
                result = await service.compact("s1", keep_recent=2)
                outcomes.append(f"folded {len(result.folded)}")
            except InputError as exc:
                outcomes.append(str(exc))
                advice.append(advised(exc, "context_compact"))

        with trio.fail_after(30):  # a deadlock guard
            async with trio.open_nursery() as nursery:
                for service in services:
                    nursery.start_soon(compact, service)
        assert sorted(outcomes)[0] == "folded 10"
        assert "changed while compacting" in sorted(outcomes)[1]
        # One instruction: it read "...: compact again; call context_compact again".
        assert len(advice) == 1 and advice[0].endswith(" folded meanwhile); call context_compact again"), advice
        records = read_journal(a.data.session_journal("s1")).records
        assert [r.data.get("role") for r in records].count("summary") == 1
        for ctx in (a, b):
            status = await ctx.sessions.status("s1")
            assert (status.live_entries, status.summaries) == (3, 1)
