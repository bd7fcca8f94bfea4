"""Small truths in the tools' answers: one of a thing is singular, and a note says what happened."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from ctxtrio.memory.model import SessionStatus
from ctxtrio.memory.render import id_span, render_status
from testkit.results import text_of
from tests.tools.test_sessions import call, opened

if TYPE_CHECKING:
    from pathlib import Path


async def test_one_of_a_thing_is_singular(tmp_path: Path) -> None:
    """'(1 session)', '1 live entry', '1 chunk', '1 document': a small model reads the noun too."""
    async with opened(tmp_path) as (_, client):
        await call(client, "context_open", session_id="s1", title="t")
        await call(client, "context_append", session_id="s1", text="the build uses trio")
        assert text_of(await call(client, "context_list_sessions")).endswith("(1 session)")
        assert ": 1 live entry (0 pinned)" in text_of(await call(client, "context_open", session_id="s1"))
        ingested = text_of(await call(client, "doc_ingest", doc_id="notes", text="one short chunk of text"))
        assert ": 1 chunk, " in ingested
        listed = text_of(await call(client, "doc_list"))
        assert listed.startswith("1 document:\n") and ": 1 chunk, " in listed
        past = text_of(await call(client, "doc_window", doc_id="notes", **{"from": 5}))
        assert " has 1 chunk (#0): from=5 is past the end. Pass from=0, or leave from out" in past, past
        for n in range(2):
            await call(client, "context_append", session_id="s1", text=f"note {n} about the parser")
        assert ": 3 live entries (0 pinned)" in text_of(await call(client, "context_open", session_id="s1"))
        await call(client, "context_compact", session_id="s1", keep_recent=0)
        assert "(0 pinned, 0 tokens; 1 summary)" in text_of(await call(client, "context_status", session_id="s1"))


async def test_the_guide_names_both_ways_the_llm_was_turned_off(tmp_path: Path) -> None:
    """CTX_LLM_ENABLED=false is how a host config's env block turns the LLM off: the guide named only --no-llm."""
    async with opened(tmp_path) as (_, client):
        guide = text_of(await call(client, "context_guide"))
        assert "- summaries: extractive only (LLM off: --no-llm / CTX_LLM_ENABLED=false)" in guide
        assert "- context window: unknown (LLM off: --no-llm / CTX_LLM_ENABLED=false); set --budget" in guide


async def test_a_pin_that_fits_alone_is_not_said_to_be_over_the_budget(tmp_path: Path) -> None:
    """At budget_tokens=50 a pin within 50 tokens leaves to make room for the answer's own lines: say that."""
    async with opened(tmp_path) as (ctx, client):
        await call(client, "context_open", session_id="s1", title="t")
        pin = "Decision: we use PostgreSQL 16 for the main store because of jsonb indexing."
        await call(client, "context_append", session_id="s1", text=pin, pinned=True)
        recalled = await call(client, "context_recall", session_id="s1", budget_tokens=50)
        assert recalled.structured_content is not None
        assert recalled.structured_content["ids"] == []  # the pin left (the case this test is about)
        assert ctx.live.tokens.current.estimate(pin) < 50
        text = text_of(recalled)
        assert "over budget_tokens" not in text
        assert "(pins not shown, too little room in budget_tokens: e2)" in text


async def test_following_the_compaction_advice_to_the_letter_never_loops(tmp_path: Path) -> None:
    """At budget 200 the defaults (keep_recent=10, target_tokens=400) fold little or nothing: the advice names
    the arguments that fold, so each call it advises folds something, until the session is back under its
    budget (each compaction merges the summary before it; they piled up until nothing was left to fold)."""
    async with opened(tmp_path) as (ctx, client):
        ctx.live.budget_tokens = 200
        await call(client, "context_open", session_id="s1", title="t")
        for n in range(14):
            text = text_of(await call(client, "context_append", session_id="s1", text=f"note {n}: flaky test {n}"))
        advised = 0
        while match := re.search(r"call context_compact(?: with ([^.]*?))? (?:now|soon)\.", text):
            arguments: dict[str, object] = {"session_id": "s1"}
            arguments.update((key, int(value)) for key, value in (kv.split("=") for kv in (match[1] or "").split()))
            text = text_of(await call(client, "context_compact", **arguments))
            assert text.startswith("Folded "), (arguments, text)
            advised += 1
            assert advised < 10, text
        status = await call(client, "context_status", session_id="s1")
        assert status.structured_content is not None and status.structured_content["advice"] == "ok", text
        assert advised >= 2 and "; 1 summary)" in text_of(status), text_of(status)


async def test_a_line_that_starts_like_an_entry_head_does_not_read_as_one(tmp_path: Path) -> None:
    """A note quoting recall ('[e12 decision pinned] ...') and a summary of it: in recall's answer only an
    entry's head starts a line with '[', so a model can tell where entries start; the stored text is unchanged."""
    quoted = "Copied from the old session:\n[e12 decision pinned] use cookies\n[e13 note] tests pass"
    async with opened(tmp_path) as (ctx, client):
        await call(client, "context_open", session_id="s1", title="t")
        await call(client, "context_append", session_id="s1", text=quoted)
        await call(client, "context_append", session_id="s1", text="[e9 note] an old head on the first line")
        for session_id, expected in (("s1", 2), ("s2", 1)):
            if session_id == "s2":  # a summary of such notes: its lines are the notes' lines
                await call(client, "context_open", session_id="s2", title="t")
                await call(client, "context_append", session_id="s2", text="[e4 note] the first quoted note")
                await call(client, "context_append", session_id="s2", text="[e5 note] the second quoted note")
                await call(client, "context_compact", session_id="s2", keep_recent=0)
            recalled = await call(client, "context_recall", session_id=session_id)
            assert recalled.structured_content is not None
            heads = [line for line in text_of(recalled).splitlines() if line.startswith("[")]
            assert len(heads) == len(recalled.structured_content["ids"]) == expected, text_of(recalled)
        assert "\n  [e12 decision pinned] use cookies\n  [e13 note] tests pass" in text_of(
            await call(client, "context_recall", session_id="s1", query="cookies")
        )
        contents = await ctx.sessions.contents("s1")
        assert [entry.text for entry in contents.entries if entry.role == "note"][0] == quoted


async def test_the_token_and_budget_lines_say_each_thing_once(tmp_path: Path) -> None:
    """The guide said 'cold-start estimate (...): cold-start estimate (...)' and '4000 tokens (default 4000 (...))',
    context_status 'cold-start (cold-start estimate (...))': the kind of count and the default, each once."""
    async with opened(tmp_path) as (_, client):
        await call(client, "context_append", session_id="s1", text="the build uses trio")
        guide = text_of(await call(client, "context_guide"))
        status = text_of(await call(client, "context_status", session_id="s1"))
    for text in (guide, status):
        assert text.count("cold-start") == 1 and text.count("4000") <= 1 + text.count("/4000"), text
    assert "- token counts: cold-start estimate (leans high; no tokenizer): built-in rates, ASCII scale 1" in guide
    assert "token counts: cold-start estimate (built-in rates, ASCII scale 1)" in status


async def test_one_entry_is_singular_in_recall_compaction_and_undo(tmp_path: Path) -> None:
    """'(1 more match not shown ...)', 'nothing to fold: 1 live unpinned entry', 'Undid compaction e6: 1 entry (e4) is
    live again': one of a thing is singular in the session answers too."""
    async with opened(tmp_path) as (_, client):
        await call(client, "context_append", session_id="s1", text="the parser fails on tabs " * 30)
        short = text_of(await call(client, "context_compact", session_id="s1"))
        assert short.startswith("Nothing to fold: 1 live unpinned entry besides summaries"), short
        await call(client, "context_append", session_id="s1", text="the parser fails on spaces " * 30)
        recalled = text_of(await call(client, "context_recall", session_id="s1", query="parser", limit=1))
        assert "(1 more match not shown: raise limit)" in recalled, recalled
        for n in range(2):
            await call(client, "context_append", session_id="s1", text=f"note {n}")
        await call(client, "context_compact", session_id="s1", keep_recent=1)  # e2..e4 into e6
        for entry_id in ("e2", "e3"):
            await call(client, "context_update", session_id="s1", entry_id=entry_id, restore=True)
        undone = text_of(await call(client, "context_update", session_id="s1", entry_id="e6", restore=True))
        assert undone.startswith("Undid compaction e6: 1 entry (e4) is live again."), undone


async def test_past_the_end_of_one_item_names_offset_0_alone(tmp_path: Path) -> None:
    """With one session or one document, a page past the end said "use offset=0 to 0" / "use from=0 to 0"."""
    async with opened(tmp_path) as (_, client):
        await call(client, "context_append", session_id="s1", text="the build uses trio")
        await call(client, "doc_ingest", doc_id="notes", text="one short chunk of text")
        sessions = text_of(await call(client, "context_list_sessions", offset=5))
        documents = text_of(await call(client, "doc_list", **{"from": 5}))
    assert sessions == "(1 session; offset=5 is past the end: use offset=0)", sessions
    assert "1 document; from=5 is past the end: use from=0." in documents, documents


async def test_a_verbatim_compaction_says_why_it_has_fewer_tokens(tmp_path: Path) -> None:
    """'37 -> 21 tokens, verbatim' read as if text was cut: the texts are whole, only their heads became one."""
    async with opened(tmp_path) as (_, client):
        for n in range(3):
            await call(client, "context_append", session_id="s1", text=f"note {n}", tags=["build"])
        folded = text_of(await call(client, "context_compact", session_id="s1", keep_recent=0))
        recalled = text_of(await call(client, "context_recall", session_id="s1"))
    assert re.search(r"tokens, verbatim \(the texts whole, under one head\)\. Now ", folded), folded
    assert "[e5 summary #build] note 0\nnote 1\nnote 2\n" in recalled, recalled


async def test_resuming_with_another_title_says_it_renamed_the_session(tmp_path: Path) -> None:
    """context_open on an existing session with a new title renames it: the answer said only 'Resumed s1 "New"'."""
    async with opened(tmp_path) as (ctx, client):
        await call(client, "context_open", session_id="s1", title="Fix the parser")
        renamed = text_of(await call(client, "context_open", session_id="s1", title="Fix the lexer"))
        same = text_of(await call(client, "context_open", session_id="s1", title="Fix the lexer"))
        assert (await ctx.sessions.open("s1")).renamed_from is None
    assert renamed.startswith('Resumed s1 "Fix the lexer" (renamed from "Fix the parser"): 0 live entries'), renamed
    assert same.startswith('Resumed s1 "Fix the lexer": 0 live entries'), same


async def test_an_entry_id_in_another_case_is_the_entry_and_a_bare_number_is_told_the_e(tmp_path: Path) -> None:
    """'E3' answered "no entry 'E3'" with e3 in the session; '3' now says to type e3."""
    async with opened(tmp_path) as (_, client):
        for n in range(3):
            await call(client, "context_append", session_id="s", text=f"note {n} about the parser")
        pinned = await call(client, "context_update", session_id="s", entry_id="E3", pinned=True)
        assert not pinned.is_error and text_of(pinned).startswith("e3 pinned."), text_of(pinned)
        bare = await call(client, "context_update", session_id="s", entry_id="3", delete=True)
        assert bare.is_error and text_of(bare).startswith(
            "Error: session 's' has no entry '3' (entry ids start with e: e3); context_recall shows entry ids"
        ), text_of(bare)
        recalled = text_of(await call(client, "context_recall", session_id="s"))
        assert "[e3 note pinned]" in recalled and "[e4 note]" in recalled, recalled


async def test_a_tag_sent_as_one_string_is_stored_and_recalled(tmp_path: Path) -> None:
    """context_append and context_recall, the two tools with tags, take tags="auth" as one tag."""
    async with opened(tmp_path) as (_, client):
        await call(client, "context_open", session_id="s1", title="t")
        stored = await call(client, "context_append", session_id="s1", text="the login fails on expiry", tags="Auth")
        assert not stored.is_error, text_of(stored)
        await call(client, "context_append", session_id="s1", text="the build uses trio", tags=["build"])
        assert text_of(await call(client, "context_recall", session_id="s1", tags="auth")).startswith("[e2 note #auth]")


async def test_a_compaction_that_skips_a_pin_does_not_span_it(tmp_path: Path) -> None:
    """'Folded 5 entries (e2..e7)' took in the pinned e4 it left: the entries folded are said as their runs."""
    async with opened(tmp_path) as (_, client):
        for n in range(6):
            await call(client, "context_append", session_id="s", text=f"note {n} about the parser", pinned=n == 2)
        preview = text_of(await call(client, "context_compact", session_id="s", keep_recent=0, dry_run=True))
        folded = text_of(await call(client, "context_compact", session_id="s", keep_recent=0))
        undone = text_of(await call(client, "context_update", session_id="s", entry_id="e8", restore=True))
    assert preview.startswith("Would fold 5 entries (e2..e3, e5..e7; "), preview
    assert folded.startswith("Folded 5 entries (e2..e3, e5..e7) into e8: "), folded
    assert undone.startswith("Undid compaction e8: 5 entries (e2..e3, e5..e7) are live again."), undone


def test_a_span_of_entries_says_only_what_it_holds() -> None:
    """A span is said whole only when nothing between is left out; else its runs, what is left out, or a count."""
    ids = ("e2", "e3", "e5", "e7", "e8", "e9", "e11")  # four runs, three left out
    assert id_span(ids) == "e2..e11 but e4, e6, e10"
    assert id_span(("e2", "e4", "e6", "e8", "e10")) == "e2..e10 but 4 entries between"
    assert id_span(("e2", "e3", "e4")) == "e2..e4" and id_span(("e2", "e5")) == "e2, e5"
    assert id_span(("x1", "e2")) == "x1, e2" and id_span(("a", "b", "c", "d")) == "a, b, c, d"


def test_a_long_list_of_imported_ids_says_how_many_it_leaves_out() -> None:
    """More than four ids that are not ``e`` and a number (an imported entry's) say the first, the last
    and how many between, as a run of e-numbers says its count: "x1, ..., x9" gave none."""
    assert id_span(tuple(f"x{n}" for n in range(1, 10))) == "x1, x9 and 7 entries between"
    assert id_span(("a", "b", "c", "d", "e")) == "a, e and 3 entries between"


async def test_recall_says_its_query_searches_the_text_and_its_tags_filter(tmp_path: Path) -> None:
    """A tag is not searched by query (a model put 'auth' in the query to find entries tagged auth): the
    description says which does what, and a query of a tag alone finds no entry by it."""
    async with opened(tmp_path) as (_, client):
        (recall,) = [tool for tool in (await client.list_tools()).tools if tool.name == "context_recall"]
        await call(client, "context_append", session_id="s", text="the login form keeps cookies", tags=["auth"])
        await call(client, "context_append", session_id="s", text="the build is green again")
        by_query = text_of(await call(client, "context_recall", session_id="s", query="auth"))
        by_tag = text_of(await call(client, "context_recall", session_id="s", query="login", tags=["auth"]))
    assert (
        recall.description is not None and "query searches the text (none: latest); tags filters" in recall.description
    )
    assert "cookies" not in by_query and "cookies" in by_tag, (by_query, by_tag)


async def test_an_id_that_differs_only_in_case_is_named(tmp_path: Path) -> None:
    """'Subprocess' for the document subprocess, 'Webhooks' for the session webhooks: ids are case-sensitive,
    and "no document" alone sends a small model guessing; the refusal names the id it meant."""
    async with opened(tmp_path) as (_, client):
        await call(client, "doc_ingest", doc_id="subprocess", text="Popen.kill sends SIGKILL to the child.")
        await call(client, "context_open", session_id="webhooks")
        window = text_of(await call(client, "doc_window", doc_id="Subprocess"))
        assert window == (
            "Error: no document 'Subprocess' (ids are case-sensitive: subprocess); doc_list shows the documents"
        ), window
        recalled = text_of(await call(client, "context_recall", session_id="Webhooks", query="kill"))
        assert recalled.startswith("Error: no session 'Webhooks' (ids are case-sensitive: webhooks); "), recalled
        other = text_of(await call(client, "doc_window", doc_id="nosuch"))
        assert other == "Error: no document 'nosuch'; doc_list shows the documents", other


async def test_every_field_filled_and_the_unused_ones_blank_is_one_call(tmp_path: Path) -> None:
    """A small model sends each field of the schema, the ones it does not use as '': every such call was refused
    (doc_ingest "pass exactly one of text or file_path" beside text=''); it now does what the filled fields say."""
    async with opened(tmp_path) as (_, client):
        ingested = text_of(await call(client, "doc_ingest", text="Popen.kill sends SIGKILL.", file_path="", doc_id=""))
        assert ingested.startswith("Ingested doc-"), ingested
        stored = await call(client, "context_append", session_id="s", text="kill it", role="", tags="", pinned="")
        assert stored.structured_content is not None and stored.structured_content["id"] == "e2", text_of(stored)
        found = text_of(await call(client, "doc_search", query="SIGKILL", doc_id="", limit="", budget_tokens=""))
        assert "Popen.kill sends SIGKILL." in found, found
        recalled = text_of(await call(client, "context_recall", session_id="s", query="kill", tags="", limit=""))
        assert "[e2 note] kill it" in recalled, recalled
        empty = text_of(await call(client, "doc_ingest", text="", file_path=""))
        assert empty.startswith("Error: "), empty  # nothing given at all is still refused


def test_the_pinned_tokens_of_a_status_say_one_token() -> None:
    """The status line's pinned count says '1 token' for one, as every count of tokens does (text/plural)."""
    status = SessionStatus("s", "S", 1, 1, 4000, "built-in default", 1, 1, 0, 0, 0, "cold", 0.0, "ok", 0)
    assert "(1 pinned, 1 token; 0 summaries)" in render_status(status)
    assert "(0 pinned, 0 tokens; 0 summaries)" in render_status(replace(status, pinned=0, pinned_tokens=0))


async def test_undoing_a_summary_again_says_it_was_undone_and_where_its_entries_are(tmp_path: Path) -> None:
    """A second restore answered "e8 unchanged (deleted)" (user23's sitting): it says the undo happened, where
    the folded entries are now, and that there is no redo (context_compact folds again while any is live)."""
    async with opened(tmp_path) as (_, client):
        for n in range(6):
            await call(client, "context_append", session_id="s", text=f"note {n} about the parser")
        await call(client, "context_compact", session_id="s", keep_recent=0)  # e2..e7 into e8
        await call(client, "context_update", session_id="s", entry_id="e8", restore=True)
        again = text_of(await call(client, "context_update", session_id="s", entry_id="e8", restore=True))
        await call(client, "context_update", session_id="s", entry_id="e2", delete=True)
        await call(client, "context_compact", session_id="s", keep_recent=0)  # e3..e7 into a new summary
        later = text_of(await call(client, "context_update", session_id="s", entry_id="e8", restore=True))
    assert again.startswith(
        "e8 was undone already: of the entries it folded, e2..e7 are live again. "
        "There is no redo; context_compact folds live entries again."
    ), again
    assert re.match(
        r"e8 was undone already: of the entries it folded, e2 deleted since, e3\.\.e7 folded into e\d+ since\. "
        r"There is no redo\. ",
        later,
    ), later


async def test_tags_sent_as_one_comma_string_are_refused_saying_tags_is_a_list(tmp_path: Path) -> None:
    """tags="a,b" (a small model's habit) was refused "tag 'a,b' is invalid: use 1-32 letters ...", which never
    says that tags is a list: the refusal shows the list to send; a tag that is no list of tags is refused as before."""
    async with opened(tmp_path) as (_, client):
        appended = text_of(await call(client, "context_append", session_id="s", text="x", tags="auth,#bug"))
        recalled = text_of(await call(client, "context_recall", session_id="s", tags="auth; bug"))
        spaced = text_of(await call(client, "context_append", session_id="s", text="x", tags=["auth bug"]))
        odd = text_of(await call(client, "context_append", session_id="s", text="x", tags="a!b"))
    sent = 'tags is a list, one tag per item: send tags=["auth", "bug"]'
    assert appended == f"Error: tag 'auth,#bug' is invalid: {sent}", appended
    assert recalled == f"Error: tag 'auth; bug' is invalid: {sent}", recalled
    assert spaced == f"Error: tag 'auth bug' is invalid: {sent}, or tags=[\"auth-bug\"] for one tag", spaced
    assert odd == "Error: tag 'a!b' is invalid: use 1-32 letters, digits or . _ : / + - (no spaces)", odd


async def test_a_tag_of_words_apart_by_spaces_is_refused_naming_both_readings(tmp_path: Path) -> None:
    """tags="build failure" may be two tags or one tag of two words: the refusal showed only the list of two
    (mend23c); it shows the one hyphened tag too. Commas or semicolons say a list: the list alone."""
    async with opened(tmp_path) as (_, client):
        spaced = text_of(await call(client, "context_append", session_id="s", text="x", tags="build failure"))
        recalled = text_of(await call(client, "context_recall", session_id="s", tags="build  #failure"))
        listed = text_of(await call(client, "context_append", session_id="s", text="x", tags="build, failure"))
    both = 'send tags=["build", "failure"], or tags=["build-failure"] for one tag'
    assert spaced == f"Error: tag 'build failure' is invalid: tags is a list, one tag per item: {both}", spaced
    assert recalled.endswith(both), recalled
    assert listed.endswith('send tags=["build", "failure"]'), listed
