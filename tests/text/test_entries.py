"""Extractive session summaries: decisions outrank status lines, near-duplicates said once."""

from __future__ import annotations

from ctxtrio.text.entries import EntryText, is_decision, summarize_entries
from ctxtrio.text.tokens import TokenModel

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
    """Eighteen 'Ran npm test' lines become one line, the latest wording, with (×18)."""
    summary = summarize_entries(session(), target_tokens=400, model=MODEL)
    assert summary.count("Ran npm test") == 1
    assert "assistant: Ran npm test (run 17): 1 failing, 39 passing. (×18)" in summary
    assert summary.count("user: ok") + summary.count("user: OK") == 1 and "user: OK! (×2)" in summary


def test_decisions_are_cut_to_a_share_when_they_do_not_fit() -> None:
    """With room for little, every decision still keeps its start; the routine lines go."""
    summary = summarize_entries(session(), target_tokens=90, model=MODEL)
    lines = summary.split("\n")
    assert "Ran npm test" not in summary and MODEL.estimate(summary) <= 90
    for decision in DECISIONS:
        full = decision.text if decision.role == "note" else f"{decision.role}: {decision.text}"
        assert any(full.startswith(line) and len(line) >= 12 for line in lines), full


def test_what_counts_as_a_decision() -> None:
    """Pinned, role decision, a decision tag or decision phrasing; a status line is none."""
    assert all(is_decision(entry) for entry in DECISIONS)
    assert not is_decision(EntryText("assistant", "Ran npm test: 0 failing."))
    assert not is_decision(EntryText("note", "The decision tree module is slow.", tags=("perf",)))
