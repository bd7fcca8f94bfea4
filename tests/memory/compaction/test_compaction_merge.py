"""A compaction merges the earlier summaries into its own, so a long session's summaries do not pile up.

A session compacted each time its status says so (keep_recent 10, target 400, the defaults) grew one
~400-token summary per compaction and never shrank: a week of 3,000 notes at budget 4,000 ended with
294 summaries, 111,440 of its 112,626 live tokens, status "compact now" after every compaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

import ctxtrio
import ctxtrio.memory
import ctxtrio.text.entries
from ctxtrio._wiring import open_wiring
from ctxtrio.memory.compaction.compact import MERGED_NOTE
from ctxtrio.memory.compaction.slices import SliceFile
from ctxtrio.memory.render import id_span, render_compacted, render_status, render_updated
from ctxtrio.store.reading import read_journal
from ctxtrio.text.terms import terms
from tests.cli.runner import cli
from tests.llm.fake_stream import FakeModel, open_fake_model
from tests.memory.compaction.test_compaction_resume import sessions, stand_in

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from ctxtrio._context import Context

DECISION = "Decision: keep cookie support behind LEGACY_COOKIES for one release"


def config(tmp_path: Path) -> ctxtrio.Config:
    return ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False, budget_tokens=4000)


async def _day(ctx: Context, day: int) -> ctxtrio.CompactResult:
    """Twelve findings of ~70 tokens, then a compaction with the defaults."""
    for n in range(12):
        words = " ".join(f"w{day}x{n}x{k}" for k in range(20))
        await ctx.sessions.append("week", f"finding {day}.{n}: {words}")
    return await ctx.sessions.compact("week")


async def test_compacting_again_and_again_keeps_one_summary_under_the_budget(tmp_path: Path) -> None:
    """Twenty compactions with the defaults: one summary, made from the entries (the first day's
    decision is in it word for word), the session under its budget, and every folded entry in it."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        await ctx.sessions.append("week", DECISION, role="decision")
        results = [await _day(ctx, day) for day in range(20)]
        status = await ctx.sessions.status("week")
        entries = await ctx.sessions.export("week")
    last, previous = results[-1].summary, results[-2].summary
    assert last is not None and previous is not None and results[-1].merged == (previous.id,)
    assert status.summaries == 1 and status.advice == "ok", status
    assert DECISION in last.text
    superseded = [e.id for e in entries if e.status == "superseded"]
    assert list(results[-1].folded) == superseded and len(superseded) == 1 + 20 * 12 - 10
    assert all(e.superseded_by == last.id for e in entries if e.status == "superseded")
    retired = [e for e in entries if e.role == "summary" and e.id != last.id]
    assert len(retired) == 19 and all(e.status == "deleted" for e in retired)


async def test_a_chain_of_merged_summaries_lists_each_entry_folded_twice_at_most(tmp_path: Path) -> None:
    """Each summary merged into a later one listed in ``folds`` everything folded before it: exported, twenty
    compactions of 12 notes listed 2,6xx ids for 231 folded (3,000 notes compacted every 10: 448,500). A merged
    summary lists what its own compaction folded; the live one lists them all; so does it after a restart."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        results = [await _day(ctx, day) for day in range(20)]
        entries = await ctx.sessions.export("week")
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        assert await ctx.sessions.export("week") == entries
    folded = [e.id for e in entries if e.status == "superseded"]
    merged = [e for e in entries if e.role == "summary" and e.status == "deleted"]
    assert (len(merged), len(folded)) == (19, 20 * 12 - 10)
    assert sorted(f for e in merged for f in e.folds) == sorted(f for r in results[:-1] for f in r.folded[-12:])
    assert [e.folds for e in entries if e.status == "live" and e.role == "summary"] == [tuple(folded)]


async def test_undoing_a_merged_compaction_brings_back_every_entry_and_replays_the_same(tmp_path: Path) -> None:
    """The merge is one journal line (the new summary names the one it merges and folds its entries too):
    a restart replays it to the same state, and undoing it brings back every entry either folded."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        first = await _day(ctx, 0)
        second = await _day(ctx, 1)
        before = await ctx.sessions.export("week"), await ctx.sessions.status("week")
    assert first.summary is not None and second.summary is not None and second.merged == (first.summary.id,)
    journal = read_journal(tmp_path / "data" / "sessions" / "week.jsonl").records
    last = journal[-1]
    assert (last.id, last.data["merges"], journal[-2].kind) == (second.summary.id, [first.summary.id], "entry")
    assert last.data["folds"] == [f for f in second.folded if f not in first.folded]  # the line stays short
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        assert (await ctx.sessions.export("week"), await ctx.sessions.status("week")) == before
        undone = await ctx.sessions.update("week", second.summary.id, restore=True)
        status = await ctx.sessions.status("week")
    assert undone.restored == second.folded and len(second.folded) == 2 + 12
    assert (status.live_entries, status.summaries, status.superseded) == (24, 0, 0)


async def test_a_merge_says_which_summary_it_takes_the_place_of(tmp_path: Path) -> None:
    """The answer names the merged summary and what an undo brings back; a dry run says it would merge."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        first = await _day(ctx, 0)
        for n in range(12):
            await ctx.sessions.append("week", f"finding 1.{n}: more words here")
        plan = await ctx.sessions.compact("week", dry_run=True)
        done = await ctx.sessions.compact("week")
    assert first.summary is not None and done.summary is not None
    rendered_plan, rendered = render_compacted(plan), render_compacted(done)
    assert f"merging summary {first.summary.id}" in rendered_plan, rendered_plan
    assert f"merging summary {first.summary.id}" in rendered, rendered
    assert f"The undo brings back all {len(done.folded)} entries." in rendered, rendered


async def test_restoring_a_merged_summary_names_the_summary_that_merged_it(tmp_path: Path) -> None:
    """A restore of a summary a later compaction merged changes nothing; it answered "e14 was undone already
    ... There is no redo" of a summary nobody undid. It names the merging summary and its undo."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        first = await _day(ctx, 0)
        second = await _day(ctx, 1)
        assert first.summary is not None and second.summary is not None
        answer = await ctx.sessions.update("week", first.summary.id, restore=True)
    merged, into = first.summary.id, second.summary.id
    assert not answer.changed and answer.merged_into == into
    assert render_updated(answer).startswith(
        f"{merged} was merged into {into} by a later compaction: of the entries it folded, "
        f"{id_span(first.folded)} folded into {into} since. restore=true on {into} undoes that compaction. Now "
    ), render_updated(answer)


async def test_a_merge_does_not_ask_the_llm_to_summarize_the_whole_session(tmp_path: Path) -> None:
    """With an LLM: the first compaction asks it; the next, which merges the first's entries, is the
    decisions-first extract (no request: one over every entry folded so far at each compaction)."""
    async with (
        trio.open_nursery() as nursery,
        open_wiring(ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)) as ctx,
    ):
        model = await open_fake_model(nursery, FakeModel(tokens_per_event=8))
        async with sessions(ctx, model) as service:
            for n in range(30):
                await service.append("s", f"finding {n}: the cache answered in {n * 7} ms on host h{n}")
            first = await service.compact("s", keep_recent=0, target_tokens=120)
            asked = len(model.served)
            for n in range(30, 40):
                await service.append("s", f"finding {n}: the cache answered in {n * 7} ms on host h{n}")
            second = await service.compact("s", keep_recent=0, target_tokens=120)
        nursery.cancel_scope.cancel()
    assert asked > 0 and first.summary is not None and second.merged == (first.summary.id,)
    assert len(model.served) == asked and second.method == "extractive" and second.note == MERGED_NOTE


async def test_an_import_that_renumbers_entries_renumbers_what_a_summary_merges(tmp_path: Path) -> None:
    """Export without the first entry (as after a prune), import: the ids move down by one, and the
    merging summary still names the summary it merged (it named a stale id: two summaries live)."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        await ctx.sessions.append("week", "a note pruned away later")
        await _day(ctx, 0)
        await _day(ctx, 1)
        records = await ctx.sessions.records("week")
        kept = [r for r in records if r.get("id") != "e2"]
        imported = await ctx.sessions.import_session("copy", kept)
        source, copy = await ctx.sessions.status("week"), await ctx.sessions.status(imported.session_id)
        live = [e.text for e in await ctx.sessions.export("copy") if e.status == "live"]
    assert imported.ids == "remapped"
    assert (copy.summaries, copy.live_entries, copy.superseded) == (1, source.live_entries, source.superseded - 1)
    assert len(live) == copy.live_entries


async def test_summaries_merged_or_undone_are_not_counted_as_deleted(tmp_path: Path) -> None:
    """Status and `ctxtrio show` said "2 deleted" after two merges, of a session where nothing was deleted;
    they count those summaries apart, and an entry deleted by hand still reads as deleted."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        for day in range(3):
            await _day(ctx, day)
        await ctx.sessions.update("week", "e30", delete=True)
        status = await ctx.sessions.status("week")
    assert (status.deleted, status.retired) == (3, 2)
    assert ", 1 deleted, 2 earlier summaries (merged or undone)" in render_status(status), render_status(status)
    shown = (await cli(tmp_path / "data", "show", "week")).out
    assert ", 1 deleted, 2 earlier summaries (merged or undone)" in shown.splitlines()[0], shown


async def test_show_and_status_count_one_merged_summary_alike(tmp_path: Path) -> None:
    """`ctxtrio show` counted retired summaries over its entries apart from status's count over the state, and
    said "1 earlier summaries"; the count is the state's (SessionContents.retired), worded as status words it."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        for day in range(2):
            await _day(ctx, day)
        status = await ctx.sessions.status("week")
        contents = await ctx.sessions.contents("week")
    assert status.retired == contents.retired == 1
    assert ", 0 deleted, 1 earlier summary (merged or undone)" in render_status(status), render_status(status)
    shown = (await cli(tmp_path / "data", "show", "week")).out
    assert ", 0 deleted, 1 earlier summary (merged or undone)" in shown.splitlines()[0], shown


async def test_show_and_status_word_their_counts_with_one_function(tmp_path: Path) -> None:
    """`ctxtrio show` kept a copy of context_status's "N deleted, M earlier summaries (merged or undone)" words
    (rvA25: the layering test keeps cli/ off memory/render); both now say ctxtrio.memory.entry_counts, which
    counts a summary retired by a merge apart from an entry deleted by hand, and names retired ones only if any."""
    assert ctxtrio.memory.entry_counts(3, 1, 0) == "3 superseded, 1 deleted"
    assert ctxtrio.memory.entry_counts(0, 3, 2) == "0 superseded, 1 deleted, 2 earlier summaries (merged or undone)"
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        for day in range(2):
            result = await _day(ctx, day)
        assert result.summary is not None
        kept = next(e.id for e in await ctx.sessions.export("week") if e.status == "live" and e.role == "note")
        await ctx.sessions.update("week", kept, delete=True)
        status = await ctx.sessions.status("week")
    words = ctxtrio.memory.entry_counts(status.superseded, status.deleted, status.retired)
    assert words == f"{status.superseded} superseded, 1 deleted, 1 earlier summary (merged or undone)", words
    assert f"), {words}\n" in render_status(status), render_status(status)
    shown = (await cli(tmp_path / "data", "show", "week")).out.splitlines()[0]
    assert shown.endswith(f" live, {words}"), shown


async def test_a_merge_of_a_stand_in_does_not_promise_its_llm_summary(tmp_path: Path) -> None:
    """The LLM gone mid-compaction leaves a stand-in waiting for its LLM summary; the next compaction merges it and
    said "the LLM summary of e44 is not done yet: compact again later to swap it in", of a summary it had retired
    (against Gemma 3 270M too). It says nothing of it now, and nothing waits for it any more."""
    async with stand_in(tmp_path) as (ctx, service, first):
        for n in range(40, 50):
            await service.append("s", f"Step {n} moved node-{n} to rack {n % 7} and set its limit to {n * 13}.")
        second = await service.compact("s", keep_recent=5, target_tokens=150)
    assert first.summary is not None and "call again" in first.note, first.note
    assert second.merged == (first.summary.id,) and first.summary.id not in second.note, second.note
    waiting = SliceFile(ctx.data.session_journal("s"))
    await waiting.load()
    assert not waiting.pending


async def test_a_merge_reads_only_the_entries_folded_since_the_compaction_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each merge wrote its extract from the terms of every entry folded so far: 2.3-3.0 s a compaction on
    20,000 notes (stress/compact_cost.py), growing with the session. The loaded state remembers them."""
    read: list[str] = []

    def counted(text: str) -> list[str]:  # the real terms(), counted
        read.append(text)
        return terms(text)

    monkeypatch.setattr(ctxtrio.text.entries, "terms", counted)
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        for day in "abcd":  # the first two compactions fit their target: verbatim, no terms read
            read.clear()
            for n in "abcdefghijkl":  # no two alike but for digits: they would be one group, read once
                await ctx.sessions.append(
                    "week", f"finding {day}{n}: " + " ".join(f"{day}{n}{k}" for k in "mnopqrstuvwxyzmnopqr")
                )
            result = await ctx.sessions.compact("week")
        entries = {entry.id: entry.text for entry in await ctx.sessions.export("week")}
    assert len(result.folded) == 4 * 12 - 10 and result.merged
    assert read and all(text in {entries[folded] for folded in result.folded[-12:]} for text in read), read
