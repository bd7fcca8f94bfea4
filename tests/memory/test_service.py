"""SessionService through the library: durability, errors, compaction, status and recall.

Restarts and two instances on one data dir: test_service_replay.py."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
import trio

from ctxtrio._config import Config
from ctxtrio._errors import InputError, InvalidIdError, NotFoundError
from ctxtrio._wiring import open_wiring
from ctxtrio.memory.render import render_recalled
from ctxtrio.memory.service import SessionService
from ctxtrio.store.reading import read_journal
from ctxtrio.text.tokens import TokenModel
from testkit.deadlines import until
from testkit.turns import turns_of_others_during

from .doubles import RecordingSummarizer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path

    from ctxtrio._wiring import Wiring


T = TypeVar("T")


def config(tmp_path: Path) -> Config:
    return Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[Wiring]:
    async with open_wiring(config(tmp_path)) as context:
        yield context


def lines(ctx: Wiring, session_id: str) -> int:
    return len(read_journal(ctx.data.session_journal(session_id)).records)


async def test_append_is_durable_and_creates_the_session(ctx: Wiring) -> None:
    """An acknowledged append is on disk; the first one writes the session record too."""
    appended = await ctx.sessions.append("s1", "  Decision: keep cookies  ", role="decision", tags=["Auth", "#auth"])
    records = read_journal(ctx.data.session_journal("s1")).records
    assert [r.kind for r in records] == ["session", "entry"]
    assert records[1].data["text"] == "Decision: keep cookies"
    assert records[1].data["tags"] == ["auth"]
    assert appended.entry.id == records[1].id and not appended.duplicate
    assert appended.status.live_entries == 1


async def test_repeated_text_returns_the_existing_entry(ctx: Wiring) -> None:
    """Say each thing once: the same text again stores nothing; pinned=True pins the original."""
    first = await ctx.sessions.append("s1", "use postgres")
    again = await ctx.sessions.append("s1", "use postgres ")
    assert again.duplicate and again.entry.id == first.entry.id
    assert lines(ctx, "s1") == 2
    pinned = await ctx.sessions.append("s1", "use postgres", pinned=True)
    assert pinned.duplicate and pinned.entry.pinned
    assert [r.kind for r in read_journal(ctx.data.session_journal("s1")).records] == ["session", "entry", "patch"]


async def test_unknown_session_errors_hint_at_the_list(ctx: Wiring) -> None:
    """Recall, status, compact and update on an unknown session fail clearly and create nothing."""
    calls = [
        ctx.sessions.recall("ghost", "x"),
        ctx.sessions.status("ghost"),
        ctx.sessions.compact("ghost"),
        ctx.sessions.update("ghost", "e1", pinned=True),
        ctx.sessions.export("ghost"),
    ]
    for call in calls:
        with pytest.raises(NotFoundError, match="no session 'ghost'") as caught:
            await call
        assert caught.value.hint == "list_sessions"
    assert not ctx.data.session_journal("ghost").exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": ""}, "empty"),
        ({"text": "x", "tags": [f"t{n}" for n in range(11)]}, "at most 10"),
        ({"text": "x", "tags": ["two words"]}, "invalid"),
        ({"text": "x", "role": "boss"}, "role"),
        ({"text": "x" * 16_001}, "store large material as a document"),
    ],
)
async def test_bad_append_stores_nothing(ctx: Wiring, kwargs: dict[str, object], message: str) -> None:
    """Empty text, too many or bad tags, a bad role, oversized text: InputError, no file."""
    with pytest.raises(InputError, match=message):
        await ctx.sessions.append("s1", **kwargs)  # type: ignore[arg-type]  # deliberately bad values
    assert not ctx.data.session_journal("s1").exists()


async def test_unstorable_text_or_title_is_an_input_error_that_logs_nothing(
    ctx: Wiring, caplog: pytest.LogCaptureFixture
) -> None:
    """Text or a title holding an unpaired surrogate: an InputError naming it, nothing stored or logged."""
    caplog.set_level(logging.INFO, logger="ctxtrio")
    await ctx.sessions.append("s1", "a fine entry")
    before = lines(ctx, "s1")
    with pytest.raises(InputError, match="^text holds an unpaired surrogate"):
        await ctx.sessions.append("s1", "a cut emoji \ud83d here")
    with pytest.raises(InputError, match="^title holds an unpaired surrogate"):
        await ctx.sessions.open("s1", title="cut \ud83d")
    with pytest.raises(InputError, match="^title holds an unpaired surrogate"):
        await ctx.sessions.open("s2", title="cut \udc00")
    assert lines(ctx, "s1") == before and not ctx.data.session_journal("s2").exists()
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING] == []


async def test_bad_ids_and_ranges_are_input_errors(ctx: Wiring) -> None:
    """Invalid ids and out-of-range numbers fail with the allowed range; nothing is stored."""
    await ctx.sessions.append("s1", "x")
    with pytest.raises(InvalidIdError):
        await ctx.sessions.append("../etc", "x")
    with pytest.raises(InvalidIdError):
        await ctx.sessions.update("s1", "e/1", pinned=True)
    for budget in (49, 100_001):
        with pytest.raises(InputError, match="between 50 and 100000"):
            await ctx.sessions.recall("s1", "x", budget_tokens=budget)
    with pytest.raises(InputError, match="between 1 and 200"):
        await ctx.sessions.recall("s1", limit=0)
    with pytest.raises(InputError, match="between 0 and 500"):
        await ctx.sessions.compact("s1", keep_recent=501)
    with pytest.raises(InputError, match="between 50 and 20000"):
        await ctx.sessions.compact("s1", target_tokens=20_001)
    assert lines(ctx, "s1") == 2


async def test_update_needs_exactly_one_change(ctx: Wiring) -> None:
    """pinned / delete / restore: exactly one; restore=false is refused; unknown entries named."""
    entry = (await ctx.sessions.append("s1", "x")).entry
    with pytest.raises(InputError, match="exactly one"):
        await ctx.sessions.update("s1", entry.id)
    with pytest.raises(InputError, match="exactly one"):
        await ctx.sessions.update("s1", entry.id, pinned=True, delete=True)
    with pytest.raises(InputError, match="restore takes true"):
        await ctx.sessions.update("s1", entry.id, restore=False)
    with pytest.raises(NotFoundError, match="e99"):
        await ctx.sessions.update("s1", "e99", pinned=True)


async def test_update_pin_delete_restore_and_no_op(ctx: Wiring) -> None:
    """Each change writes one patch; asking for the current state writes nothing."""
    entry = (await ctx.sessions.append("s1", "x")).entry
    pinned = await ctx.sessions.update("s1", entry.id, pinned=True)
    assert pinned.changed and pinned.entry.pinned and pinned.status.pinned == 1
    again = await ctx.sessions.update("s1", entry.id, pinned=True)
    assert not again.changed
    deleted = await ctx.sessions.update("s1", entry.id, delete=True)
    assert deleted.entry.status == "deleted" and deleted.status.live_entries == 0
    with pytest.raises(InputError, match="restore it first"):
        await ctx.sessions.update("s1", entry.id, pinned=False)
    back = await ctx.sessions.update("s1", entry.id, delete=False)  # the original's way to undelete
    assert back.entry.status == "live" and back.restored == (entry.id,)
    assert [r.kind for r in read_journal(ctx.data.session_journal("s1")).records].count("patch") == 3


async def test_compaction_round_trip_and_restore(ctx: Wiring) -> None:
    """Fold all but keep_recent unpinned entries; restoring the summary brings everything back."""
    pin = (await ctx.sessions.append("s1", "Constraint: no new dependencies", pinned=True)).entry
    ids = []
    for n in range(12):
        appended = await ctx.sessions.append("s1", f"Step {n}: tried option {n}. It failed with code {n * 3}.")
        ids.append(appended.entry.id)
    before = await ctx.sessions.status("s1")
    plan = await ctx.sessions.compact("s1", keep_recent=4, dry_run=True)
    assert plan.dry_run and plan.folded == tuple(ids[:8]) and plan.summary is None
    assert (await ctx.sessions.status("s1")) == before  # a dry run changes nothing
    done = await ctx.sessions.compact("s1", keep_recent=4, target_tokens=60)
    assert done.folded == tuple(ids[:8]) and done.summary is not None
    assert done.summary.role == "summary" and done.summary.folds == done.folded
    assert done.method == "extractive" and done.tokens_after < done.tokens_before
    status = done.status
    assert (status.live_entries, status.superseded, status.summaries) == (1 + 4 + 1, 8, 1)
    exported = {e.id: e for e in await ctx.sessions.export("s1")}
    assert all(exported[i].status == "superseded" and exported[i].superseded_by == done.summary.id for i in ids[:8])
    assert exported[pin.id].status == "live"
    record = read_journal(ctx.data.session_journal("s1")).records[-1].data
    assert record["folds"] == list(ids[:8]) and record["method"] == "extractive"
    assert record["tokens_before"] == done.tokens_before and isinstance(record["reason"], str)
    undone = await ctx.sessions.update("s1", done.summary.id, restore=True)
    assert undone.restored == tuple(ids[:8]) and undone.entry.status == "deleted"
    after = await ctx.sessions.status("s1")
    assert (after.live_entries, after.live_tokens, after.superseded, after.summaries) == (
        before.live_entries,
        before.live_tokens,
        0,
        0,
    )


async def test_a_folded_entry_deleted_since_names_no_summary(ctx: Wiring) -> None:
    """A folded entry deleted afterwards said status 'deleted' and superseded_by 'e5' (ctxtrio show --json too):
    no summary keeps it out of recall now, and undoing the compaction leaves it deleted."""
    for n in range(3):
        await ctx.sessions.append("s1", f"note {n}")
    done = await ctx.sessions.compact("s1", keep_recent=0)  # e2..e4 into e5
    assert done.summary is not None and done.folded == ("e2", "e3", "e4")
    deleted = await ctx.sessions.update("s1", "e3", delete=True)
    exported = {e.id: e for e in await ctx.sessions.export("s1")}
    assert (deleted.entry.status, deleted.entry.superseded_by) == ("deleted", None)
    assert (exported["e3"].status, exported["e3"].superseded_by) == ("deleted", None)
    assert (exported["e2"].status, exported["e2"].superseded_by) == ("superseded", "e5")
    assert exported["e5"].folds == ("e2", "e3", "e4")  # what the compaction folded stays on the summary
    undone = await ctx.sessions.update("s1", "e5", restore=True)
    statuses = {e.id: (e.status, e.superseded_by) for e in await ctx.sessions.export("s1")}
    assert undone.restored == ("e2", "e4")
    assert statuses == {"e2": ("live", None), "e3": ("deleted", None), "e4": ("live", None), "e5": ("deleted", None)}


async def test_second_compaction_never_folds_summaries_or_pins(ctx: Wiring) -> None:
    """Summaries and pins stay; with too few candidates nothing is folded."""
    for n in range(6):
        await ctx.sessions.append("s1", f"note {n}")
    first = await ctx.sessions.compact("s1", keep_recent=0)
    assert len(first.folded) == 6
    await ctx.sessions.append("s1", "pinned", pinned=True)
    second = await ctx.sessions.compact("s1", keep_recent=0)
    assert second.folded == () and second.summary is None and "nothing to fold" in second.note


async def test_compaction_passes_the_deadline_to_the_summarizer(ctx: Wiring) -> None:
    """compact(wait=until(...)) hands the absolute deadline to the summarizer."""
    summarizer = RecordingSummarizer(ctx)
    service = SessionService(ctx.store, ctx.live, summarizer)
    for n in range(5):
        await service.append("s1", f"note number {n} with some words")
    deadline = trio.current_time() + 45
    await service.compact("s1", keep_recent=1, wait=until(deadline))
    assert summarizer.stop_at == [deadline]


async def test_status_advice_and_pin_warnings(ctx: Wiring) -> None:
    """Compaction is advised from 80% of the budget and insisted on above it; crowded pins warn."""
    ctx.live.budget_tokens = 100
    await ctx.sessions.append("s1", "word " * 60)
    assert (await ctx.sessions.status("s1")).advice == "compact soon"
    await ctx.sessions.append("s1", "more " * 20)
    status = await ctx.sessions.status("s1")
    assert status.advice == "compact now" and status.percent > 100
    for n in range(31):
        await ctx.sessions.append("s2", f"pin {n} " + "long " * 5, pinned=True)
    warnings = (await ctx.sessions.status("s2")).warnings
    assert any("31 pins" in w for w in warnings) and any("over half" in w for w in warnings)
    assert (await ctx.sessions.status("s2")).token_source == f"cold-start estimate ({ctx.live.tokens.current.source})"


async def test_a_new_token_model_recounts(ctx: Wiring) -> None:
    """When calibration replaces the model, totals are recounted with it."""
    await ctx.sessions.append("s1", "some text to count")
    before = (await ctx.sessions.status("s1")).live_tokens
    ctx.live.tokens.current = TokenModel.flat(1.0)
    after = await ctx.sessions.status("s1")
    assert after.live_tokens > before and "1 tokens/char" in after.token_source


async def test_open_creates_resumes_and_renames(ctx: Wiring) -> None:
    """open() without an id creates a fresh session; reopening resumes; a new title renames."""
    created = await ctx.sessions.open(title="refactor auth")
    assert created.created and created.status.title == "refactor auth"
    session_id = created.status.session_id
    await ctx.sessions.append(session_id, "x")
    resumed = await ctx.sessions.open(session_id)
    assert not resumed.created and resumed.status.live_entries == 1 and resumed.status.title == "refactor auth"
    renamed = await ctx.sessions.open(session_id, "auth v2")
    assert renamed.status.title == "auth v2"


async def test_list_sessions_newest_first(ctx: Wiring) -> None:
    """List: id, title, live entries, last activity; most recent first."""
    await ctx.sessions.open("old", "Old one")
    await trio.sleep(0.01)
    await ctx.sessions.append("new", "a")
    await ctx.sessions.append("new", "b")
    infos = await ctx.sessions.list_sessions()
    assert [(i.session_id, i.title, i.live_entries) for i in infos] == [("new", "new", 2), ("old", "Old one", 0)]
    assert infos[0].last_activity >= infos[1].last_activity


async def test_status_of_an_unchanged_session_needs_no_worker_thread(
    tmp_path: Path, ctx: Wiring, monkeypatch: pytest.MonkeyPatch
) -> None:
    """context_status of a loaded session whose journal did not change is answered on the event
    loop; once another process appends, the next status reads the journal and counts the entry."""
    await ctx.sessions.append("s1", "Decision: keep cookies")
    await ctx.sessions.status("s1")  # the summary file written: nothing left to do
    thread_calls: list[object] = []
    real_run_sync = trio.to_thread.run_sync

    async def spying_run_sync(fn: Callable[..., T], *args: object, **kwargs: Any) -> T:
        thread_calls.append(fn)
        return await real_run_sync(fn, *args, **kwargs)

    monkeypatch.setattr(trio.to_thread, "run_sync", spying_run_sync)
    unchanged = await ctx.sessions.status("s1")
    assert unchanged.live_entries == 1 and thread_calls == []
    monkeypatch.undo()
    async with open_wiring(config(tmp_path)) as other:  # as another process does
        await other.sessions.append("s1", "Decision: drop sessions after a week")
    monkeypatch.setattr(trio.to_thread, "run_sync", spying_run_sync)
    changed = await ctx.sessions.status("s1")
    assert changed.live_entries == 2 and len(thread_calls) == 1


async def test_status_of_an_unchanged_session_takes_no_loop_turn(ctx: Wiring) -> None:
    """context_status of a loaded session whose journal is unchanged lets no other task run (its lock is free)."""
    await ctx.sessions.append("s1", "one entry")
    await ctx.sessions.status("s1")  # loaded and read
    statuses = []

    async def five() -> None:
        for _ in range(5):
            statuses.append(await ctx.sessions.status("s1"))

    assert await turns_of_others_during(five) == 0
    status = statuses[-1]
    assert status.live_entries == 1


async def test_recall_by_tags_that_no_entry_carries_says_so(ctx: Wiring) -> None:
    """Live entries, none tagged 'nope': the answer names the tags (it said 'Session s1 has no live
    entries.', which is false); with a query it says no entry matches, as before."""
    await ctx.sessions.append("s1", "deploys run at noon", tags=["ops"])
    await ctx.sessions.append("s1", "cookies expire in a day")
    recent = await ctx.sessions.recall("s1", tags=["nope", "gone"])
    assert recent.entries == () and recent.text == "(no unpinned entry is tagged gone or nope)\n", recent.text
    assert "tagged gone or nope" in render_recalled(recent) and "no live entries" not in render_recalled(recent)
    tagged = await ctx.sessions.recall("s1", tags=["ops"])
    assert [entry.text for entry in tagged.entries] == ["deploys run at noon"]
    queried = await ctx.sessions.recall("s1", "noon", tags=["nope"])
    assert "no unpinned entry matches the query" in queried.text


async def test_recall_shows_a_summary_where_the_entries_it_folds_were(ctx: Wiring) -> None:
    """A summary stands where the entries it folds were: laid out before the entries kept, and older than them."""
    ids = [
        (await ctx.sessions.append("s1", f"Step {n}: the cookie check failed with code {n * 3}.")).entry.id
        for n in range(10)
    ]
    done = await ctx.sessions.compact("s1", keep_recent=3, target_tokens=60)
    assert done.summary is not None and done.folded == tuple(ids[:7])
    later = (await ctx.sessions.append("s1", "Step 10: the cookie check passed.")).entry
    for query in (None, "cookie check"):
        shown = [entry.id for entry in (await ctx.sessions.recall("s1", query, budget_tokens=2000)).entries]
        assert shown == [done.summary.id, *ids[7:], later.id], query
    # The latest four in time are the kept three and the later one: the summary's material is older.
    latest = await ctx.sessions.recall("s1", budget_tokens=2000, limit=4)
    assert [entry.id for entry in latest.entries] == [*ids[7:], later.id]


async def test_a_cut_match_never_takes_the_room_a_pin_left(ctx: Wiring) -> None:
    """At the smallest budget, a pin that left for the closing line is not replaced by a passage of a match."""
    pin = (await ctx.sessions.append("s1", "Constraint: never log tokens.", pinned=True)).entry
    steps = " ".join(f"Build step {n} compiled module m{n} without warnings." for n in range(150))
    await ctx.sessions.append("s1", f"{steps} The flaky test was caused by the timezone offset in the fixture clock.")
    for budget in (50, 55, 60, 80):
        result = await ctx.sessions.recall("s1", "flaky timezone", budget_tokens=budget)
        if pin.id in result.pins_not_fit:  # too little room for the pin: none for a match either
            assert result.entries == (), (budget, result.text)
        else:
            assert result.entries[0].id == pin.id, (budget, result.text)
