"""Extractive session summaries: decisions outrank status lines, near-duplicates said once."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import ctxtrio.text.entries
from ctxtrio.text.entries import EntryMemo, EntryText, is_decision, summarize_entries
from ctxtrio.text.terms import terms
from ctxtrio.text.tokens import TokenModel

if TYPE_CHECKING:
    import pytest

MODEL = TokenModel.cold()
DECISIONS = [
    EntryText("decision", "Use SQLite FTS5 for the index, not a separate search server."),
    EntryText("note", "Decision: keep cookies for sessions; JWT only for the public API."),
    EntryText("assistant", "We decided to pin httpx below 1.0 until the transport API settles."),
    EntryText("note", "Retention of audit logs stays at 9 days.", tags=("decision",)),
    EntryText("user", "Going with port 8003 for the staging proxy."),
    EntryText("note", "Agreed: the CLI never writes to stdout except results."),
    EntryText("note", "Migrations run before the app starts, never lazily.", pinned=True),
    EntryText("assistant", "We will drop Python 3.10 support in the next release.", tags=("adr",)),
]


def session() -> list[EntryText]:
    """8 decisions spread among 30 routine status lines (repetitive test runs and builds)."""
    routine = [
        EntryText("assistant", f"Ran npm test (run {n}): {n % 4} failing, {40 - n % 4} passing.") for n in range(18)
    ]
    routine += [EntryText("assistant", f"Rebuilt the bundle in {n + 3}.2 s.") for n in range(8)]
    routine += [
        EntryText("user", "ok"),
        EntryText("user", "continue"),
        EntryText("user", "OK!"),
        EntryText("note", "Looked at the flaky upload test again; it passes locally."),
    ]
    entries: list[EntryText] = []
    for index, entry in enumerate(routine):
        entries.append(entry)
        if index % 4 == 1 and len(entries) < 40:
            entries.append(DECISIONS[len([e for e in entries if e in DECISIONS])])
    return entries


def test_all_eight_decisions_survive_among_thirty_routine_lines() -> None:
    """Extractive compaction of 8 decisions among 30 routine lines keeps all 8 (issue 10 kept 0)."""
    entries = session()
    assert sum(entry in DECISIONS for entry in entries) == 8 and len(entries) == 38
    summary = summarize_entries(entries, target_tokens=200, model=MODEL)
    for decision in DECISIONS:
        assert decision.text in summary
    assert MODEL.estimate(summary) <= 200


def test_near_duplicates_are_said_once_with_a_count() -> None:
    """Eighteen 'Ran npm test' lines become one line with (×18): the latest wording when the numbers do not
    fit, else the wording with the numbers that vary listed, the first and last of each first (text/folds.py)."""
    summary = summarize_entries(session(), target_tokens=300, model=MODEL)
    assert summary.count("Ran npm test") == 1
    assert "assistant: Ran npm test (run 17): 1 failing, 39 passing. (×18)" in summary
    summary = summarize_entries(session(), target_tokens=400, model=MODEL)
    assert summary.count("Ran npm test") == 1 and MODEL.estimate(summary) <= 400
    assert (
        "assistant: Ran npm test (run [0..17]): [0, 1, 2, +12 more, 3, 0, 1] failing, "
        "[40, 39, 38, +12 more, 37, 40, 39] passing. (×18)"
    ) in summary
    assert "assistant: Rebuilt the bundle in [3.2..10.2 step 1.0] s. (×8)" in summary
    assert summary.count("user: ok") + summary.count("user: OK") == 1 and "user: OK! (×2)" in summary


def test_decisions_that_do_not_fit_leave_the_newest_whole_and_a_count() -> None:
    """With room for little, the newest decisions stay whole and the summary says how many older ones were
    left out; the routine lines go. Cutting each to a share left six decisions at a 50-token target as bare
    labels ("Decision 0:\nDecision 1:...", user23's sitting)."""
    summary = summarize_entries(session(), target_tokens=90, model=MODEL)
    lines = summary.split("\n")
    assert "Ran npm test" not in summary and MODEL.estimate(summary) <= 90
    whole = [d.text if d.role == "note" else f"{d.role}: {d.text}" for d in DECISIONS]
    kept = lines[1:]
    assert kept and kept == whole[len(whole) - len(kept) :]
    assert lines[0] == f"({len(whole) - len(kept)} older decisions left out; restore shows them)"


def test_a_tiny_target_never_leaves_a_decision_as_a_label() -> None:
    """Six short decisions at target_tokens=50: the newest whole, the rest counted, no stub line."""
    entries = [EntryText("note", f"Decision {n}: retry webhook batch {n} later.") for n in range(6)]
    entries.append(EntryText("note", "Tried SERIALIZABLE isolation: deadlocks."))
    summary = summarize_entries(entries, target_tokens=50, model=MODEL)
    assert summary == "(5 older decisions left out; restore shows them)\nDecision 5: retry webhook batch 5 later."
    assert summarize_entries(entries, target_tokens=20, model=MODEL) == "(6 decisions left out; restore shows them)"


def test_what_counts_as_a_decision() -> None:
    """Pinned, role decision, a decision tag or decision phrasing; a status line is none."""
    assert all(is_decision(entry) for entry in DECISIONS)
    assert not is_decision(EntryText("assistant", "Ran npm test: 0 failing."))
    assert not is_decision(EntryText("note", "The decision tree module is slow.", tags=("perf",)))


def test_one_decision_left_out_is_said_in_the_singular() -> None:
    """Two decisions with room for the newest: '1 older decision left out; restore shows it' (it said
    'them'; a server's recall showed '[e14 summary] (1 older decision left out; restore shows them)')."""
    entries = [
        EntryText("note", "Decision 0: keep the billing tables on the old cluster until the quarter ends."),
        EntryText("note", "Decision 1: retry webhook batch 1 later."),
    ]
    summary = summarize_entries(entries, target_tokens=44, model=MODEL)
    assert summary == "(1 older decision left out; restore shows it)\nDecision 1: retry webhook batch 1 later."


def test_a_decision_cut_to_fit_is_marked_cut() -> None:
    """When not even the newest decision fits whole, its start ends in '...': unmarked, 'Decision 1: retry
    webhook' read as the whole decision (and a cut before a 'not' turns one around)."""
    entries = [
        EntryText("note", "Decision 0: keep the billing tables on the old cluster until the quarter ends."),
        EntryText("note", "Decision 1: retry webhook batch 1 later."),
    ]
    summary = summarize_entries(entries, target_tokens=38, model=MODEL)
    assert summary == "(1 older decision left out; restore shows it)\nDecision 1: retry webhook ..."
    assert MODEL.estimate(summary) <= 38
    # A start that is little more than the label is still left out, the mark not counted as its words.
    assert summarize_entries(entries, target_tokens=36, model=MODEL) == "(2 decisions left out; restore shows them)"


def test_a_memo_reads_each_entry_once_and_changes_no_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A merging compaction summarizes every entry folded so far; on 20,000 notes terms() of each was three
    quarters of its 2.3-3.0 s. With a memo, a later summary reads only the entries new since, and says the same."""
    read: list[str] = []

    def counted(text: str) -> list[str]:  # the real terms(), counted
        read.append(text)
        return terms(text)

    monkeypatch.setattr(ctxtrio.text.entries, "terms", counted)
    entries = [replace(entry, key=f"e{n}") for n, entry in enumerate(session())]
    memo = EntryMemo()
    for target in (60, 400):  # a summary with and without near-duplicates cut, decisions left out
        assert summarize_entries(entries, target_tokens=target, model=MODEL, memo=memo) == summarize_entries(
            entries, target_tokens=target, model=MODEL
        )
    assert len(memo) == len(entries)
    newer = [*entries, EntryText("note", "Cache hit rate is 93% on the staging proxy.", key="e99")]
    read.clear()
    with_memo = summarize_entries(newer, target_tokens=400, model=MODEL, memo=memo)
    assert read == [newer[-1].text]
    assert with_memo == summarize_entries(newer, target_tokens=400, model=MODEL)
    assert "Cache hit rate is 93%" in with_memo


def test_a_fold_of_measurements_keeps_every_value_that_fits() -> None:
    """user27: 75 notes "alpha note i: measured 7i ms" became "alpha note 75: measured 525 ms (×75)", one
    measurement of 75 (1,703 -> 58 tokens). The numbers are the content: a counter is said as a range, other
    values listed in the notes' order, all of them when they fit."""
    alpha = [EntryText("note", f"alpha note {i}: measured {7 * i} ms") for i in range(1, 76)]
    assert (
        summarize_entries(alpha, target_tokens=400, model=MODEL)
        == "alpha note [1..75]: measured [7..525 step 7] ms (×75)"
    )
    p95 = [412, 398, 455, 401, 877, 390, 402]
    runs = [EntryText("note", f"measured p95 latency {ms} ms at 120 rps (run {n * 3})") for n, ms in enumerate(p95)]
    summary = summarize_entries(runs, target_tokens=400, model=MODEL)
    assert summary == "measured p95 latency [412, 398, 455, 401, 877, 390, 402] ms at 120 rps (run [0..18 step 3]) (×7)"


def test_a_fold_too_long_keeps_the_first_and_last_values_and_never_the_target() -> None:
    """Forty measurements at shrinking targets: each summary within its target, the first and last values
    kept as long as they fit, "+N more" saying how many are left out between them, then the latest wording."""
    values = [(n * 7919) % 1000 for n in range(40)]  # no even step: a list, not a range
    entries = [EntryText("note", f"build {value} ms") for value in values]
    seen: set[str] = set()
    for target in range(300, 4, -1):
        summary = summarize_entries(entries, target_tokens=target, model=MODEL)
        assert MODEL.estimate(summary) <= target and summary == summarize_entries(
            entries, target_tokens=target, model=MODEL
        )
        seen.add(summary)
        if summary.startswith("build ["):
            listed = summary.removeprefix("build [").split("]")[0].split(", ")
            if "more" in listed[len(listed) // 2]:  # first k, "+N more", last k
                kept = len(listed) // 2
                assert listed == [*map(str, values[:kept]), f"+{40 - 2 * kept} more", *map(str, values[-kept:])]
            else:
                assert listed == [str(value) for value in values]
    assert "build [" + ", ".join(map(str, values)) + "] ms (×40)" in seen
    assert f"build [{values[0]}, +38 more, {values[-1]}] ms (×40)" in seen
    assert f"build {values[-1]} ms (×40)" in seen  # no room for the first and last: the latest wording, as before


def test_entries_that_differ_outside_their_numbers_keep_the_latest_wording() -> None:
    """'Retry 1 failed' and 'retry 2 failed!' fold by signature (case and punctuation set aside), but no one
    wording holds both: the latest stands for them as before, its count said."""
    entries = [EntryText("note", "Retry 1 failed"), EntryText("note", "retry 2 failed!")]
    assert summarize_entries(entries, target_tokens=100, model=MODEL) == "retry 2 failed! (×2)"
