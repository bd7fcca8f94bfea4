"""Session subcommands through the real command, beside a real stdio server on the same data dir."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio
from mcp import Client

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.cli.commands import find_subcommand
from ctxtrio.cli.settings import value_flags
from testkit.results import text_of

from .runner import cli, server

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._wiring import Wiring

QUERIES = ("cookie decision", "token rotation", "middleware", "")


def test_flags_alone_still_serve() -> None:
    """Only a word where a positional could stand is a subcommand; flag values never are."""
    assert find_subcommand(["--ingest-root", "./"], value_flags()) is None
    assert find_subcommand(["--data-dir", "sessions", "--http"], value_flags()) is None
    assert find_subcommand(["--data-dir=x", "--no-llm"], value_flags()) is None
    assert find_subcommand(["--data-dir", "d", "show", "s1"], value_flags()) == ("show", ["--data-dir", "d", "s1"])
    assert find_subcommand(["sessions", "--json"], value_flags()) == ("sessions", ["--json"])


async def fill(client: Client) -> None:
    await client.call_tool(
        "context_append", {"session_id": "auth", "text": "Goal: JWT, keep the API", "pinned": True, "role": "decision"}
    )
    for number in range(8):
        await client.call_tool(
            "context_append",
            {
                "session_id": "auth",
                "text": f"finding {number}: middleware expects a cookie at line {40 + number}",
                "tags": ["finding"],
            },
        )
    await client.call_tool("context_append", {"session_id": "auth", "text": "Decision: cookie flag for one release"})
    await client.call_tool("context_compact", {"session_id": "auth", "keep_recent": 3})
    await client.call_tool("context_append", {"session_id": "ops", "text": "token rotation every 15 minutes"})
    await client.call_tool("context_update", {"session_id": "ops", "entry_id": "e2", "pinned": True})


async def answers(client: Client) -> list[str]:
    found = []
    for session_id in ("auth", "ops"):
        for query in QUERIES:
            found.append(text_of(await client.call_tool("context_recall", {"session_id": session_id, "query": query})))
    return found


async def test_export_delete_import_gives_the_same_recall(tmp_path: Path) -> None:
    """Export all, delete all, import: a running server's context_recall answers exactly as before."""
    data, dump = tmp_path / "data", tmp_path / "all.jsonl"
    with trio.fail_after(120):
        async with Client(server(data)) as client:
            await fill(client)
            before = await answers(client)
            exported = await cli(data, "export", "--all", "-o", str(dump))
            assert exported.code == 0, exported.err
            assert "exported 2 sessions" in exported.err
            deleted = await cli(data, "delete", "auth", "ops", "--yes")
            assert deleted.code == 0, deleted.err
            gone = await client.call_tool("context_recall", {"session_id": "auth", "query": "cookie"})
            assert gone.is_error and "was deleted" in text_of(gone)
            imported = await cli(data, "import", str(dump), "--json")
            assert imported.code == 0, imported.err
            report = imported.json()
            assert isinstance(report, list)
            outcomes = {(r["source_id"], r["outcome"]) for r in report}
            assert outcomes == {("auth", "restored"), ("ops", "restored")}
            assert await answers(client) == before
            # Deleted and pruned for good, then imported into empty journals: same ids, same answers.
            assert (await cli(data, "delete", "auth", "ops", "--yes")).code == 0
            pruned = await cli(data, "prune", "--older-than", "0", "--yes")
            assert pruned.code == 0 and "removed session auth" in pruned.out, pruned
            again = await cli(data, "import", str(dump))
            assert again.code == 0, again.err
            assert "auth: imported (" in again.out and "ids preserved" in again.out, again.out
            assert await answers(client) == before
            twice = await cli(data, "import", str(dump))
            assert "auth: unchanged" in twice.out and "ops: unchanged" in twice.out


async def test_delete_asks_then_restore_brings_back(tmp_path: Path) -> None:
    """delete refuses without a terminal or --yes; deleted sessions are listed with --deleted and restorable."""
    data = tmp_path / "data"
    with trio.fail_after(120):
        async with Client(server(data)) as client:
            await fill(client)
            refused = await cli(data, "delete", "ops")
            assert refused.code == 2 and "--yes" in refused.err
            assert "ops" in (await cli(data, "sessions")).out
            assert (await cli(data, "delete", "ops", "--yes")).code == 0
            listed = await cli(data, "sessions", "--json")
            assert [s["session_id"] for s in listed.json()] == ["auth"]
            assert "ops" in (await cli(data, "sessions", "--deleted")).out
            shown = await cli(data, "show", "ops")
            assert "DELETED" in shown.out and "ctxtrio restore ops" in shown.out
            assert (await cli(data, "restore", "ops")).code == 0
            status = await client.call_tool("context_status", {"session_id": "ops"})
            assert not status.is_error and status.structured_content is not None
            assert status.structured_content["pinned"] == 1


async def test_delete_and_restore_say_what_changed(tmp_path: Path) -> None:
    """Deleting a deleted session, restoring one that is not deleted, naming one twice: each says it changed
    nothing (they said 'deleted ops' / 'restored ops' every time, and twice for 'ops ops'); restore names
    an unknown session before changing any, as delete does (it restored the ones before it first)."""
    data = tmp_path / "data"
    with trio.fail_after(120):
        async with Client(server(data)) as client:
            await fill(client)
        first = await cli(data, "delete", "ops", "ops", "--yes")
        assert first.code == 0 and first.out == "deleted ops (1 live entry)\n", first
        again = await cli(data, "delete", "ops", "--yes")
        assert again.code == 0 and again.out == "ops was deleted already\n", again
        unknown = await cli(data, "restore", "ops", "nope")
        assert unknown.code == 2 and unknown.out == "", unknown
        assert unknown.err == "ctxtrio: error: no session 'nope'; ctxtrio sessions lists them\n", unknown
        assert "DELETED" in (await cli(data, "show", "ops")).out
        restored = await cli(data, "restore", "ops", "auth")
        assert restored.code == 0 and restored.out == "restored ops (1 live entry)\nauth was not deleted\n", restored


async def test_show_marks_pins_tags_summaries_and_status(tmp_path: Path) -> None:
    """show prints each entry's role, pin, tags, what a summary folds and who superseded an entry."""
    data = tmp_path / "data"
    with trio.fail_after(120):
        async with Client(server(data)) as client:
            await fill(client)
    shown = await cli(data, "show", "auth")
    assert shown.code == 0
    lines = shown.out.splitlines()
    assert lines[0].startswith('auth "auth": 5 live, 6 superseded, 0 deleted')
    assert any("[decision pinned]" in line and "Goal: JWT" in line for line in lines)
    assert any("[note #finding SUPERSEDED by e12]" in line for line in lines)
    assert any("[summary" in line and "folds e3, e4" in line for line in lines)
    entries = (await cli(data, "show", "auth", "--json")).json()
    assert isinstance(entries, dict) and len(entries["entries"]) == 11


async def _notes_compacted(ctx: Wiring, count: int, *, keep_recent: int) -> None:
    """Session s: ``count`` notes (e2 on), all but ``keep_recent`` folded into a summary."""
    for n in range(count):
        await ctx.sessions.append("s", f"note {n}: the parser fails on tabs, case {n}")
    await ctx.sessions.compact("s", keep_recent=keep_recent)


async def test_show_says_what_a_summary_still_folds_after_restores_and_deletes(tmp_path: Path) -> None:
    """A summary whose entries were restored or deleted one by one listed them all as 'folds e2, e3, e4, e5'."""
    data = tmp_path / "data"
    async with open_wiring(Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        await _notes_compacted(ctx, 5, keep_recent=1)  # e2..e5 into e7
        await ctx.sessions.update("s", "e3", restore=True)
        await ctx.sessions.update("s", "e5", delete=True)
        for n in range(2):
            await ctx.sessions.append("t", f"note {n} of t")
        await ctx.sessions.compact("t", keep_recent=0)  # e2, e3 into e4
        await ctx.sessions.update("t", "e4", restore=True)
    shown = (await cli(data, "show", "s")).out
    assert "[summary folds e2, e4 (e3 restored; e5 deleted)]" in shown, shown
    undone = (await cli(data, "show", "t")).out
    assert "[summary DELETED folded e2, e3 (all restored)]" in undone, undone


async def test_show_lists_the_first_few_ids_of_a_large_compaction(tmp_path: Path) -> None:
    """A summary of 400 entries is shown with the first five ids folded and how many more, where show printed all
    400 on one line (user24's sitting); --json still lists every one, and a short list is shown whole."""
    data = tmp_path / "data"
    async with open_wiring(Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        await _notes_compacted(ctx, 400, keep_recent=0)  # e2..e401 into e402
        await ctx.sessions.update("s", "e3", restore=True)
    shown = (await cli(data, "show", "s")).out
    assert "[summary folds e2, e4, e5, e6, e7 and 394 more (e3 restored)]" in shown, shown[-600:]
    assert max(len(line) for line in shown.splitlines()) < 600
    (summary,) = [entry for entry in (await cli(data, "show", "s", "--json")).json()["entries"] if entry["folds"]]
    assert len(summary["folds"]) == 400


async def test_prune_dry_run_changes_nothing(tmp_path: Path) -> None:
    """prune --dry-run says what would go and leaves every journal as it was."""
    data = tmp_path / "data"
    with trio.fail_after(120):
        async with Client(server(data)) as client:
            await fill(client)
    journal = data / "sessions" / "auth.jsonl"
    size = journal.stat().st_size
    dry = await cli(data, "prune", "--older-than", "0", "--dry-run")
    assert dry.code == 0 and "would remove entries auth: 6 entries" in dry.out, dry.out
    assert journal.stat().st_size == size
    bad = await cli(data, "prune", "--older-than", "soon")
    assert bad.code == 2 and "bad duration" in bad.err


async def test_import_without_a_terminal_says_one_line_per_session_and_a_closing_count(tmp_path: Path) -> None:
    """As ingest: no progress line per session on stderr without a terminal (--verbose brings them back);
    each session's outcome once on stdout, then one closing count."""
    data, dump = tmp_path / "data", tmp_path / "all.jsonl"
    with trio.fail_after(120):
        async with Client(server(data)) as client:
            for session_id in ("a", "b", "c"):
                await client.call_tool("context_append", {"session_id": session_id, "text": f"note of {session_id}"})
        assert (await cli(data, "export", "--all", "-o", str(dump))).code == 0
        fresh = tmp_path / "fresh"
        imported = await cli(fresh, "import", str(dump))
        assert imported.code == 0 and imported.err == "", imported
        assert imported.out.count("imported (2 records, ids preserved)") == 3, imported.out
        assert imported.out.splitlines()[-1].startswith("done: 3 imported, 0 restored, 0 unchanged; 6 records in ")
        verbose = await cli(fresh, "import", str(dump), "--verbose")
        assert verbose.err.count("import ") == 3 and ": unchanged" in verbose.err, verbose


async def test_a_missing_session_or_document_names_the_command_that_lists_them(tmp_path: Path) -> None:
    """The library's hint becomes a command: 'ctxtrio show nosuch' said only "no session 'nosuch'"."""
    data = tmp_path / "data"
    shown = await cli(data, "show", "nosuch")
    assert shown.code == 2 and shown.err == "ctxtrio: error: no session 'nosuch'; ctxtrio sessions lists them\n"
    searched = await cli(data, "search", "parser", "--doc", "nosuch")
    assert searched.err == "ctxtrio: error: no document 'nosuch'; ctxtrio docs lists them\n", searched
    # delete, restore and forget check the names themselves: they said "no session nosuch (ctxtrio sessions ...)"
    restored = await cli(data, "restore", "nosuch", "other")
    assert restored.err == "ctxtrio: error: no sessions 'nosuch', 'other'; ctxtrio sessions lists them\n", restored
    forgot = await cli(data, "forget", "nosuch")
    assert forgot.code == 2 and forgot.err == "ctxtrio: error: no document 'nosuch'; ctxtrio docs lists them\n", forgot


async def test_export_with_both_and_import_of_nothing_say_what_is_wrong(tmp_path: Path) -> None:
    """'export s1 --all' was told to name sessions or pass --all (it did both); an empty import was 'not a version 1 header'."""
    data = tmp_path / "data"
    both = await cli(data, "export", "s1", "--all")
    assert both.code == 2 and both.err == "ctxtrio: error: name the sessions to export, or pass --all, not both\n"
    missing = await cli(data, "import", str(data / "nowhere.jsonl"))
    assert missing.err == f"ctxtrio: error: cannot read {data / 'nowhere.jsonl'}: No such file or directory\n", missing
    binary = await cli(data, "import", "-", stdin=b"\xff\xfe")
    assert binary.err.startswith("ctxtrio: error: stdin is not UTF-8 text (byte 0): give an export"), binary
    empty = await cli(data, "import", "-", stdin=b"\n")
    assert (
        empty.code == 2
        and empty.err == "ctxtrio: error: stdin is empty: give an export ('ctxtrio export' writes one)\n"
    )
