"""Compaction against a slow model: the stand-in is written now, the LLM summary replaces it later, across restarts."""

from __future__ import annotations

import socket
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio
import trio.testing

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.llm.summarizer import Summarizer
from ctxtrio.memory.compaction.slices import slices_path
from ctxtrio.memory.service import SessionService
from ctxtrio.store.reading import read_journal
from testkit.deadlines import until
from tests.llm.fake_stream import FakeModel, open_fake_model

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from ctxtrio._wiring import Wiring
    from ctxtrio.memory.model import CompactResult

ENTRIES = 150  # about 6,000 tokens folded: four slices and a merge in a 4,096-token window
DEADLINE_S = 45.0


@asynccontextmanager
async def sessions(ctx: Wiring, model: FakeModel) -> AsyncIterator[SessionService]:
    """A session service whose summarizer talks to ``model`` through a running background worker."""
    async with open_llm_client(LLMSettings(model.base_url, timeout_s=120.0)) as client, trio.open_nursery() as nursery:
        summarizer = Summarizer(client, ctx.live.tokens, context_tokens=lambda: 4096)
        await nursery.start(summarizer.run_worker)
        yield SessionService(ctx.store, ctx.live, summarizer)
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def stand_in(tmp_path: Path) -> AsyncIterator[tuple[Wiring, SessionService, CompactResult]]:
    """Session "s", 40 steps compacted (keep_recent 5, target 150) with the model server gone: the summary is
    the extractive stand-in waiting for its LLM summary. The wiring, the service and that compaction."""
    with socket.socket() as probe:  # a loopback port nothing listens on: the model server was killed
        probe.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    async with (
        open_wiring(Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as ctx,
        open_llm_client(LLMSettings(gone, timeout_s=120.0)) as client,
        trio.open_nursery() as nursery,
    ):
        summarizer = Summarizer(client, ctx.live.tokens, context_tokens=lambda: 4096)
        await nursery.start(summarizer.run_worker)
        service = SessionService(ctx.store, ctx.live, summarizer)
        for n in range(40):
            await service.append("s", f"Step {n} moved node-{n} to rack {n % 7} and set its limit to {n * 13}.")
        yield ctx, service, await service.compact("s", keep_recent=5, target_tokens=150)
        nursery.cancel_scope.cancel()


def summaries(ctx: Wiring) -> list[dict[str, object]]:
    """The summary entries of session "s" in journal order (their bodies)."""
    records = read_journal(ctx.data.session_journal("s")).records
    return [dict(r.data) for r in records if r.kind == "entry" and r.data.get("role") == "summary"]


async def test_a_compaction_cut_by_its_deadline_is_finished_after_a_restart(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """The stand-in folds the entries at once; after a restart a later compact swaps in the LLM summary, resuming."""
    async with (
        trio.open_nursery() as nursery,
        open_wiring(Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as ctx,
    ):
        model = await open_fake_model(nursery, FakeModel(tokens_per_event=8))
        async with sessions(ctx, model) as service:
            for n in range(ENTRIES):
                await service.append(
                    "s", f"Step {n} moved node-{n} to rack {n % 7} and set its limit to {n * 13} requests."
                )
            first = await service.compact(
                "s", keep_recent=5, target_tokens=300, wait=until(trio.current_time() + DEADLINE_S)
            )
        assert first.method in ("extractive", "llm+extractive") and len(first.folded) == ENTRIES - 5
        assert "goes on in the background" in first.note
        assert slices_path(ctx.data.session_journal("s")).exists()
        asked_before_restart = len(model.served)
        async with sessions(ctx, model) as service:  # a restart: new worker, nothing in memory but the files
            with trio.fail_after(3600.0):
                while (
                    "replaced it as"
                    not in (
                        again := await service.compact(
                            "s", keep_recent=5, target_tokens=300, wait=until(trio.current_time() + DEADLINE_S)
                        )
                    ).note
                ):
                    await trio.sleep(30.0)
            entries = {entry.id: entry for entry in await service.export("s")}
        nursery.cancel_scope.cancel()
    stand_in, final = summaries(ctx)
    assert stand_in["method"] == first.method and final["method"] == "llm"
    assert final["folds"] == stand_in["folds"] == list(first.folded)
    assert "replaced it as" in again.note and first.summary is not None and first.summary.id in again.note
    assert entries[first.summary.id].status == "deleted"  # the stand-in is retired, its entries folded anew
    assert all(entries[folded].status == "superseded" for folded in first.folded)
    resumed = model.served[asked_before_restart:]
    steps = 5  # four slices and the merge
    assert len(resumed) <= steps - 1 and len(model.served) <= steps + 1  # the kept steps are not asked again
    assert not slices_path(ctx.data.session_journal("s")).exists()  # nothing pending: the cache is gone


async def test_a_background_summary_the_llm_could_not_write_is_said_by_the_next_compact(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """Told to call again for the LLM summary, a model that calls again hears that it was rejected, not silence."""
    async with (
        trio.open_nursery() as nursery,
        open_wiring(Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as ctx,
    ):
        model = await open_fake_model(nursery, FakeModel(tokens_per_event=8, behaviour="echo"))  # every answer rejected
        async with sessions(ctx, model) as service:
            for n in range(40):
                await service.append("s", f"Step {n} moved node-{n} to rack {n % 7} and set its limit to {n * 13}.")
            first = await service.compact("s", keep_recent=5, target_tokens=150, wait=until(trio.current_time() + 5.0))
            assert "goes on in the background" in first.note and first.summary is not None
            with trio.fail_after(3600.0):
                while "could not summarize" not in (again := await service.compact("s", keep_recent=5)).note:
                    await trio.sleep(30.0)
            entries = {entry.id: entry for entry in await service.export("s")}
        nursery.cancel_scope.cancel()
    said = f"; the LLM could not summarize what {first.summary.id} folds (LLM answer rejected ("
    assert said in again.note and again.note.endswith("): it stays as it is"), again.note
    assert entries[first.summary.id].status == "live" and len(summaries(ctx)) == 1


async def test_a_compact_while_the_llm_summary_is_not_done_says_so(tmp_path: Path) -> None:
    """The LLM down mid-compaction: the stand-in's answer says to call again; a call before the LLM summary is done
    said only 'Nothing to fold' (as if it was dropped) and now says it is not done yet."""
    async with stand_in(tmp_path) as (_, service, first):
        assert first.method == "extractive" and "call again" in first.note and first.summary is not None, first.note
        again = await service.compact("s", keep_recent=5)
    assert again.summary is None and again.note.startswith("nothing to fold"), again.note
    assert again.note.endswith(
        f"; the LLM summary of {first.summary.id} is not done yet: compact again later to swap it in"
    )
