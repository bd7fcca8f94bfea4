"""The context_* tools through the SDK's in-memory client: schemas, texts, errors."""

from __future__ import annotations

import dataclasses
import json
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import trio
import trio.testing
from mcp import Client

from ctxtrio._app import build_server
from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.memory.service import SessionService
from ctxtrio.store.reading import read_journal
from ctxtrio.tools.sessions import SESSION_TOOLS
from testkit.results import text_of
from tests.memory.doubles import RecordingSummarizer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from mcp.types import CallToolResult

    from ctxtrio._wiring import Wiring
    from ctxtrio.llm.summarizer import Wait


@asynccontextmanager
async def opened(tmp_path: Path) -> AsyncIterator[tuple[Wiring, Client]]:
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
        yield ctx, client


async def call(client: Client, tool: str, **arguments: object) -> CallToolResult:
    return await client.call_tool(tool, arguments)


async def test_tool_list_share_is_small_and_annotated(tmp_path: Path) -> None:
    """The seven session tools show a model at most 3,000 characters of tools/list; titles, hints, output schemas."""
    async with opened(tmp_path) as (_, client):
        tools = [tool for tool in (await client.list_tools()).tools if tool.name in SESSION_TOOLS]
        assert {tool.name for tool in tools} == set(SESSION_TOOLS)
        # What a host shows the model: everything but the outputSchema (see test_tool_list.py).
        dumped = [
            tool.model_dump(by_alias=True, exclude_none=True, mode="json", exclude={"output_schema"}) for tool in tools
        ]
        assert len(json.dumps(dumped, separators=(",", ":"))) <= 3000
        for tool in tools:
            assert tool.title and tool.annotations is not None
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
            assert tool.annotations.open_world_hint is False
            if not tool.annotations.read_only_hint:  # no session tool destroys: the default (true) is overridden
                assert tool.annotations.destructive_hint is False
            assert "title" not in tool.input_schema
            assert all("title" not in prop for prop in tool.input_schema["properties"].values())
        recall = next(tool for tool in tools if tool.name == "context_recall")
        assert set(recall.input_schema["properties"]) == {"session_id", "query", "budget_tokens", "limit", "tags"}


async def test_the_workflow_through_the_client(tmp_path: Path) -> None:
    """open, append, recall, status, compact, update, list: compact lines plus structured content."""
    async with opened(tmp_path) as (_, client):
        created = await call(client, "context_open", title="refactor auth")
        assert created.structured_content is not None and created.structured_content["created"] is True
        session_id = str(created.structured_content["session_id"])
        pin = await call(
            client,
            "context_append",
            session_id=session_id,
            text="Keep cookies",
            role="decision",
            pinned=True,
            tags=["auth"],
        )
        assert text_of(pin).startswith("Stored e2 (1 live")
        for n in range(12):
            text = f"Tried fix {n} for getUserName; it failed."
            await call(client, "context_append", session_id=session_id, text=text)
        recalled = await call(client, "context_recall", session_id=session_id, query="user name", budget_tokens=120)
        text = text_of(recalled)
        assert text.splitlines()[0] == "[e2 decision pinned #auth] Keep cookies"
        assert "more matches not shown: raise budget_tokens" in text
        assert recalled.structured_content is not None and recalled.structured_content["ids"][0] == "e2"
        status = text_of(await call(client, "context_status", session_id=session_id))
        assert status.startswith(f'{session_id} "refactor auth": ') and "advice: ok" in status
        compacted = await call(client, "context_compact", session_id=session_id, keep_recent=2)
        assert "Folded 10 entries (e3..e12) into e15" in text_of(compacted)
        undone = await call(client, "context_update", session_id=session_id, entry_id="e15", restore=True)
        assert "Undid compaction e15: 10 entries (e3..e12) are live again" in text_of(undone)
        listed = text_of(await call(client, "context_list_sessions"))
        assert listed.startswith(f'{session_id} "refactor auth": 13 live, ')


async def test_duplicate_append_says_so(tmp_path: Path) -> None:
    """Appending a live entry's text again names the existing id and stores nothing."""
    async with opened(tmp_path) as (ctx, client):
        await call(client, "context_append", session_id="s1", text="use postgres")
        again = await call(client, "context_append", session_id="s1", text="use postgres")
        assert text_of(again) == "Already stored as e2 (same text); nothing added."
        assert len(read_journal(ctx.data.session_journal("s1")).records) == 2


async def test_errors_are_clear_results_and_store_nothing(tmp_path: Path) -> None:
    """Unknown sessions name context_list_sessions; bad input says the fix; no file is written."""
    async with opened(tmp_path) as (ctx, client):
        unknown: list[tuple[str, dict[str, object]]] = [
            ("context_recall", {"query": "x"}),
            ("context_status", {}),
            ("context_compact", {}),
            ("context_update", {"entry_id": "e1", "pinned": True}),
        ]
        for tool, extra in unknown:
            result = await call(client, tool, session_id="ghost", **extra)
            assert result.is_error and "context_list_sessions" in text_of(result), tool
        bad: list[tuple[str, dict[str, object], str]] = [
            ("context_append", {"session_id": "s1", "text": "   "}, "text is empty"),
            ("context_append", {"session_id": "s1", "text": "x", "tags": [str(n) for n in range(11)]}, "at most 10"),
            ("context_append", {"session_id": "../x", "text": "x"}, "invalid session_id"),
            ("context_recall", {"session_id": "s1", "budget_tokens": 10}, "between 50 and 100000"),
        ]
        for tool, arguments, message in bad:
            result = await client.call_tool(tool, arguments)
            assert result.is_error and message in text_of(result), (tool, text_of(result))
        assert list(ctx.data.sessions.iterdir()) == []


async def test_unicode_recall_through_the_client(tmp_path: Path) -> None:
    """Korean, Chinese, Japanese, accented and Cyrillic entries are found by their words."""
    entries = {
        "결정": "결정했다: 데이터베이스는 PostgreSQL",
        "缓存": "我们决定使用缓存",
        "キャッシュ": "キャッシュを無効にする",
        "résumé": "Le résumé est prêt",
        "кэш": "Очистить кэш сервера",
    }
    async with opened(tmp_path) as (_, client):
        ids = {}
        for word, text in entries.items():
            result = await call(client, "context_append", session_id="u", text=text)
            assert result.structured_content is not None
            ids[word] = result.structured_content["id"]
        for word in entries:
            result = await call(client, "context_recall", session_id="u", query=word)
            assert result.structured_content is not None
            assert result.structured_content["ids"] == [ids[word]], word


def _with_summarizer(ctx: Wiring, summarizer: RecordingSummarizer) -> Wiring:
    """``ctx`` whose session service compacts through ``summarizer`` (a test double)."""
    sessions = SessionService(ctx.store, ctx.live, summarizer)
    return dataclasses.replace(ctx, context=dataclasses.replace(ctx.context, sessions=sessions))


async def test_compact_tool_sets_the_llm_deadline(tmp_path: Path) -> None:
    """context_compact gives the summarizer now + llm_deadline_s as its deadline."""
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False, llm_deadline_s=30.0)
    async with open_wiring(config) as ctx:
        summarizer = RecordingSummarizer(ctx)
        ctx = _with_summarizer(ctx, summarizer)
        async with Client(build_server(ctx)) as client:
            for n in range(4):
                await call(client, "context_append", session_id="s1", text=f"note {n}")
            before = trio.current_time()
            await call(client, "context_compact", session_id="s1", keep_recent=1)
            after = trio.current_time()
        assert len(summarizer.stop_at) == 1
        assert before + 30.0 <= summarizer.stop_at[0] <= after + 30.0


async def test_list_sessions_pages_by_offset(tmp_path: Path) -> None:
    """context_list_sessions answers one page within the budget; its last line gives the next offset."""
    async with opened(tmp_path) as (ctx, client):
        ctx.live.budget_tokens = 120
        for n in range(12):
            await call(client, "context_open", session_id=f"s{n:02d}", title=f"session number {n}")
        seen: list[str] = []
        offset = 0
        for _ in range(12):
            result = await call(client, "context_list_sessions", offset=offset)
            text = text_of(result)
            assert not result.is_error and ctx.live.tokens.current.estimate(text) <= 120
            assert result.structured_content is not None
            seen += [str(item["id"]) for item in result.structured_content["sessions"]]
            next_offset = result.structured_content["next_offset"]
            if next_offset is None:
                break
            assert text.endswith(f"next page: offset={next_offset})")
            offset = int(next_offset)
        assert sorted(seen) == [f"s{n:02d}" for n in range(12)] and len(seen) == 12


async def test_over_budget_with_nothing_to_fold_does_not_advise_compacting(tmp_path: Path) -> None:
    """Pins and a summary over the budget: the advice says what helps, not context_compact, which folds neither."""
    async with opened(tmp_path) as (_, client):
        await call(client, "context_open", session_id="s")
        for n in range(16):  # four pins and a summary of about 1,500 tokens: past the 4,000 default, none foldable
            words = " ".join(f"w{n}x{k}" for k in range(120))
            await call(client, "context_append", session_id="s", text=f"finding {n}: {words}", pinned=n < 4)
        await call(client, "context_compact", session_id="s", keep_recent=0, target_tokens=1500)
        status = await call(client, "context_status", session_id="s")
        assert status.structured_content is not None and status.structured_content["advice"] == "compact now"
        again = await call(client, "context_compact", session_id="s", keep_recent=0)
    for result in (status, again):
        text = text_of(result)
        assert "call context_compact" not in text, text
        assert "nothing left to fold" in text and "undo a summary (restore it)" in text, text
    assert "pins are never folded, and a summary is merged only into a compaction" in text_of(again), text_of(again)


async def test_compacting_one_entry_or_keeping_too_many_says_what_folds(tmp_path: Path) -> None:
    """One long note over the budget is not advised a compaction; keep_recent that keeps all names one that folds."""
    async with opened(tmp_path) as (_, client):
        words = " ".join(f"w{k}" for k in range(1400))
        one = await call(client, "context_append", session_id="a", text=f"one long note: {words}")
        assert "call context_compact" not in text_of(one) and "nothing left to fold" in text_of(one), text_of(one)
        for n in range(5):
            await call(client, "context_append", session_id="b", text=f"note {n}: {words}")
        kept = await call(client, "context_compact", session_id="b")  # keep_recent=10 by default
        for n in range(2):
            await call(client, "context_append", session_id="c", text=f"note {n}: short")
        two = await call(client, "context_compact", session_id="c")
    assert text_of(kept).startswith(
        "Nothing to fold: keep_recent=10 keeps the newest of the 5 live unpinned entries, "
        "and a compaction folds at least 2: keep_recent=3 or less folds the older ones."
    ), text_of(kept)
    # Only 0 folds two entries: not "keep_recent=0 or less", which invites keep_recent=-1 (out of range).
    assert text_of(two).startswith(
        "Nothing to fold: keep_recent=10 keeps the newest of the 2 live unpinned entries, "
        "and a compaction folds at least 2: keep_recent=0 folds them."
    ), text_of(two)


async def test_deleting_a_summary_says_what_becomes_of_what_it_folds(tmp_path: Path) -> None:
    """A deleted summary's entries stay folded, and restore undoes the compaction: the answer says both."""
    async with opened(tmp_path) as (_, client):
        for n in range(6):
            await call(client, "context_append", session_id="s", text=f"note {n} about the parser")
        compacted = await call(client, "context_compact", session_id="s", keep_recent=2)
        assert compacted.structured_content is not None
        summary_id = str(compacted.structured_content["summary_id"])
        deleted = await call(client, "context_update", session_id="s", entry_id=summary_id, delete=True)
        restored = await call(client, "context_update", session_id="s", entry_id=summary_id, restore=True)
    assert text_of(deleted).startswith(
        f"{summary_id} deleted; the entries it folds (e2..e5) stay out of recall; "
        "restore=true undoes its compaction (they come back, the summary does not)."
    ), text_of(deleted)
    assert text_of(restored).startswith(f"Undid compaction {summary_id}: 4 entries (e2..e5) are live again.")


async def test_restoring_one_folded_entry_says_its_summary_still_holds_it(tmp_path: Path) -> None:
    """A summary's text is never rewritten, so a restored entry is also in it: the answer says so and names the
    restore that undoes the rest; a summary whose entries were each restored is not said to keep them out."""
    async with opened(tmp_path) as (ctx, client):
        for n in range(4):
            await call(client, "context_append", session_id="s", text=f"note {n}: the parser fails on tabs, case {n}")
        await call(client, "context_compact", session_id="s", keep_recent=1)  # e2..e4 into e6
        one = text_of(await call(client, "context_update", session_id="s", entry_id="e3", restore=True))
        assert one.startswith(
            "e3 restored; summary e6 still says what it said of it, so recall may show both: "
            "restore=true on e6 undoes that compaction (e2, e4 come back too; the summary goes)."
        ), one
        updated = await ctx.sessions.update("s", "e2", restore=True)
        assert (updated.folded_into, updated.still_folded) == ("e6", ("e4",))
        last = text_of(await call(client, "context_update", session_id="s", entry_id="e4", restore=True))
        assert "restore=true on e6 retires it (it folds nothing else now)." in last, last
        deleted = text_of(await call(client, "context_update", session_id="s", entry_id="e6", delete=True))
        assert deleted.startswith("e6 deleted; the entries it folded (e2..e4) are live already (each restored)."), (
            deleted
        )
        recalled = text_of(await call(client, "context_recall", session_id="s"))
        assert [line[:4] for line in recalled.splitlines() if line.startswith("[")] == ["[e2 ", "[e3 ", "[e4 ", "[e5 "]


async def test_entries_left_of_a_compaction_are_listed_as_the_compaction_lists_them(tmp_path: Path) -> None:
    """Undo said '6 entries (6 entries, e2..e3, e5..e8)' and a short list 'e2 e4': the compaction's span, commas."""
    async with opened(tmp_path) as (_, client):
        for n in range(7):
            await call(client, "context_append", session_id="s", text=f"note {n}: the parser fails on tabs, case {n}")
        await call(client, "context_compact", session_id="s", keep_recent=0)  # e2..e8 into e9
        one = text_of(await call(client, "context_update", session_id="s", entry_id="e4", restore=True))
        undone = text_of(await call(client, "context_update", session_id="s", entry_id="e9", restore=True))
    assert "restore=true on e9 undoes that compaction (e2..e3, e5..e8 come back too; the summary goes)." in one, one
    assert undone.startswith("Undid compaction e9: 6 entries (e2..e3, e5..e8) are live again."), undone


class _GatedSummarizer(RecordingSummarizer):
    """Extractive, but each summary waits for :attr:`go` (so other compactions arrive meanwhile)."""

    def __init__(self, ctx: Wiring) -> None:
        super().__init__(ctx)
        self.go = trio.Event()

    async def before(self, wait: Wait) -> None:
        await self.go.wait()


async def test_compactions_that_waited_say_which_compaction_folded_the_entries(tmp_path: Path) -> None:
    """Three context_compact calls at once: the two that waited for the first name its summary, not only 'nothing to fold'."""
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx:
        summarizer = _GatedSummarizer(ctx)
        ctx = _with_summarizer(ctx, summarizer)
        async with Client(build_server(ctx)) as client:
            for n in range(6):
                await call(client, "context_append", session_id="s1", text=f"note {n} about the parser")
            answers: list[str] = []

            async def compact() -> None:
                answers.append(text_of(await call(client, "context_compact", session_id="s1", keep_recent=2)))

            async with trio.open_nursery() as nursery:
                for _ in range(3):
                    nursery.start_soon(compact)
                await trio.testing.wait_all_tasks_blocked()
                summarizer.go.set()
            alone = text_of(await call(client, "context_compact", session_id="s1", keep_recent=2))
    assert answers[0].startswith("Folded 4 entries (e2..e5) into e8:"), answers
    for later in answers[1:]:
        assert later.startswith(
            "Nothing folded: another compaction folded them while this call waited: e8 (e2..e5); nothing to fold: "
        ), later
    assert alone.startswith("Nothing to fold: keep_recent=2 keeps"), alone  # no compaction ran meanwhile; said once


async def test_a_recall_matching_only_a_folded_entry_names_it_and_its_restore(tmp_path: Path) -> None:
    """An extractive summary leaves lines out: a query only such an entry matches said 'no unpinned entry
    matches the query', as if it was never written; it names the entry, its summary and the restore."""
    async with opened(tmp_path) as (_, client):
        await call(client, "context_append", session_id="s", text="Goal: no double charges.", pinned=True)
        for n in range(12):
            await call(client, "context_append", session_id="s", text=f"Decision {n}: retry webhook batch {n} later.")
        await call(client, "context_append", session_id="s", text="Tried SERIALIZABLE isolation: deadlocks, reverted.")
        for n in range(12):
            await call(client, "context_append", session_id="s", text=f"Decision {n + 12}: page on-call for batch {n}.")
        compacted = text_of(await call(client, "context_compact", session_id="s", keep_recent=1, target_tokens=60))
        assert compacted.startswith("Folded 24 entries (e3..e26) into e28:"), compacted
        recalled = text_of(await call(client, "context_recall", session_id="s", query="serializable isolation"))
        assert "SERIALIZABLE" not in recalled  # the summary's extract left it out
        assert (
            "\n(no unpinned entry matches the query; e15 matches it, folded into e28 by a compaction: "
            "context_update entry_id=e15 restore=true brings it back)\n" in recalled
        ), recalled
        assert "e15 restored" in text_of(
            await call(client, "context_update", session_id="s", entry_id="e15", restore=True)
        )
        again = text_of(await call(client, "context_recall", session_id="s", query="serializable isolation"))
        assert "[e15 note] Tried SERIALIZABLE" in again and "no unpinned entry matches" not in again
        none = text_of(await call(client, "context_recall", session_id="s", query="kubernetes"))
        assert "\n(no unpinned entry matches the query)\n" in none, none


async def test_the_folded_entry_hint_never_pushes_out_a_pin(tmp_path: Path) -> None:
    """At a budget that holds the pin and the plain closing line but not the hint, the pin stays and the hint goes."""
    async with opened(tmp_path) as (ctx, client):
        await call(
            client, "context_append", session_id="s", text="Goal: keep the public webhook URL unchanged.", pinned=True
        )
        for n in range(6):
            await call(client, "context_append", session_id="s", text=f"Decision {n}: retry webhook batch {n} later.")
        await call(client, "context_append", session_id="s", text="Tried SERIALIZABLE isolation: deadlocks.")
        await call(client, "context_compact", session_id="s", keep_recent=0, target_tokens=50)
        recalled = await ctx.sessions.recall("s", "serializable", budget_tokens=80)
        assert [pin.id for pin in recalled.entries] == ["e2"] and "pins not shown" not in recalled.text, recalled.text
        assert "no unpinned entry matches the query" in recalled.text and "restore=true" not in recalled.text


async def test_undo_on_the_full_compaction_tool_is_refused_naming_the_undo(tmp_path: Path) -> None:
    """The full profile's context_compact has no undo (the compact profile's): undo=e3 was ignored and the call
    folded 6 of 16 entries instead. It is refused, naming context_update restore=true, and nothing is folded."""
    async with opened(tmp_path) as (ctx, client):
        for number in range(16):
            await call(client, "context_append", session_id="s", text=f"note number {number} " * 5)
        refused = await call(client, "context_compact", session_id="s", undo="e3", keep_recent=2)
        assert refused.is_error
        assert text_of(refused) == (
            "Error: unknown argument 'undo': this tool only folds; context_update entry_id=<summary id> "
            "restore=true undoes a compaction. Nothing was done."
        )
        assert (await ctx.sessions.status("s")).summaries == 0


async def test_recall_of_a_query_without_searchable_words_says_the_entries_are_the_latest(tmp_path: Path) -> None:
    """context_recall query="the of and" (or "*"): the latest entries, and the closing line says they are no matches."""
    async with opened(tmp_path) as (_, client):
        for n in range(3):
            await client.call_tool("context_append", {"session_id": "s", "text": f"note {n}: the cache is warm"})
        for query in ("the of and", "*"):
            answer = text_of(await client.call_tool("context_recall", {"session_id": "s", "query": query}))
            assert answer.splitlines() == [
                "[e2 note] note 0: the cache is warm",
                "[e3 note] note 1: the cache is warm",
                "[e4 note] note 2: the cache is warm",
                "(the query has no searchable words (only punctuation or common stopwords): "
                "these are the latest entries, not matches; use distinctive words)",
                answer.splitlines()[-1],
            ]
            assert answer.splitlines()[-1].endswith(" tokens, estimated)")  # no LLM to count with
        latest = text_of(await client.call_tool("context_recall", {"session_id": "s"}))
        assert "searchable" not in latest  # no query: the latest entries are what was asked for
