"""Recall's cuts: entries too large to fit shown as passages that share the budget (split from test_packing.py)."""

from __future__ import annotations

import random

from ctxtrio.memory.ranking import rank
from ctxtrio.text.terms import unique_terms

from .state.test_state import Journal
from .test_packing import MODEL, recall


def test_a_cut_entry_shows_its_densest_passage() -> None:
    """Of two places in a long entry, the cut shows the lines that hold all the query's words,
    not the first line holding as many as any one line does."""
    journal = Journal()
    filler = "\n".join(f"line {n}: " + "routine status report " * 4 for n in range(40))
    text = "the zebrafish tank was cleaned\n" + filler + "\nthe zebrafish tank leaks\nat valve seven\n" + filler + "\n"
    entry = journal.entry(text)
    result = recall(journal.state(), "zebrafish tank valve", 120)
    assert [e.id for e in result.entries] == [entry]
    shown = result.entries[0].text
    assert "zebrafish tank leaks\nat valve seven" in shown
    # The first line only as the entry's headline above the passage (memory/headline.py), not instead of it.
    assert shown.startswith("the zebrafish tank was cleaned\n[...] line 38: ")


def test_the_best_match_too_large_to_fit_keeps_its_place_before_smaller_matches() -> None:
    """A long entry ranked first is shown cut to its passage, not pushed out by whole entries
    ranked below it that fill the budget first (recall_bench at 250 tokens: 16 of 60 questions'
    first-ranked entry was not shown at all, smaller matches were)."""
    journal = Journal()
    filler = "\n".join(f"line {n}: " + "routine status report " * 4 for n in range(40))
    best = journal.entry(filler + "\nthe zebrafish tank leaks at valve seven\n" + filler)
    small = [journal.entry(f"zebrafish note {n}: fed at noon " + "ok " * 20) for n in range(6)]
    ranked, _ = rank(journal.state(), unique_terms("zebrafish tank valve"), frozenset())
    assert next(ranked).id == best  # it ranks first
    result = recall(journal.state(), "zebrafish tank valve", 250)
    ids = [e.id for e in result.entries]
    assert best in ids and "zebrafish tank leaks at valve seven" in result.text
    assert set(ids) - {best} <= set(small) and len(ids) >= 2  # the rest of the room still goes to whole matches
    assert MODEL.estimate(result.text) <= result.used_tokens <= 250


def test_a_best_match_pushed_out_by_the_closing_line_is_cut_not_replaced() -> None:
    """The first-ranked entry fits the budget alone but not beside the closing line: it is cut
    to the room left (here it fits whole beside a shorter closing line), not dropped for a
    lower-ranked one shown in its place."""
    journal = Journal()
    best = journal.entry("zebrafish valve " + "the tank leaks at valve seven " * 20)
    journal.entry("zebrafish note fed at noon")
    for n in range(3):
        journal.entry(f"zebrafish log {n} " + "ok " * 30)
    state = journal.state()
    ranked, _ = rank(state, unique_terms("zebrafish valve"), frozenset())
    first = next(ranked)
    assert first.id == best and first.tokens <= 200  # it ranks first and fits alone
    result = recall(state, "zebrafish valve", 200)
    assert [e.id for e in result.entries] == [best]
    assert MODEL.estimate(result.text) <= result.used_tokens <= 200


def _long_note(topic: str, n: int) -> str:
    """A long note whose one line naming ``topic`` sits among 40 filler lines."""
    filler = [f"line {k}: routine status report number {k} for week {n}" for k in range(40)]
    filler[20] = f"the {topic} tank leaks at valve {n}"
    return "\n".join(filler)


def test_every_match_too_large_to_fit_gets_a_share_the_first_the_most() -> None:
    """Three long matches, each larger than the budget (400 tokens): each is shown cut to its passage around its
    match, as doc_search's hits share a budget (half of what is left each, the last the rest); one
    cut entry per answer showed only the first (recall_bench: rank-2 entries missed for room)."""
    journal = Journal()
    ids = [journal.entry(_long_note("zebrafish" if n == 0 else "guppy", n)) for n in range(3)]
    state = journal.state()
    ranked, _ = rank(state, unique_terms("zebrafish guppy tank valve"), frozenset())
    order = [item.id for item in ranked]
    assert order[0] == ids[0]  # the rarer word ranks it first
    result = recall(state, "zebrafish guppy tank valve", 400)
    shown = {entry.id: entry for entry in result.entries}
    assert set(shown) == set(ids) and result.not_fit == 0 and "more matches" not in result.text
    assert all(f"tank leaks at valve {n}" in shown[ids[n]].text for n in range(3))
    assert all(entry.text.startswith("[...] ") and entry.text.endswith(" [...]") for entry in result.entries)
    tokens = [shown[entry_id].tokens for entry_id in order]
    assert tokens[0] >= tokens[1] and tokens[0] >= tokens[2]
    assert MODEL.estimate(result.text) <= result.used_tokens <= 400
    assert [e.id for e in result.entries] == ids  # laid out oldest first, as whole matches are


def test_cut_matches_count_against_the_limit() -> None:
    """With a limit, the matches shown, whole and cut, are the best that many: a long first match
    cut beside a short one with limit 1 showed both (two, over the limit)."""
    journal = Journal()
    long = journal.entry(_long_note("zebrafish", 0))
    journal.entry("zebrafish note")
    state = journal.state()
    ranked, _ = rank(state, unique_terms("zebrafish tank valve"), frozenset())
    assert next(ranked).id == long
    for limit in (1, 2):
        result = recall(state, "zebrafish tank valve", 200, limit=limit)
        assert len(result.entries) == limit and result.entries[0].id == long, limit  # oldest first
        assert result.entries[0].text.startswith("[...] ")
    assert "(1 more match not shown: raise limit)" in recall(state, "zebrafish tank valve", 200, limit=1).text


def test_shares_of_long_entries_stay_within_the_budget() -> None:
    """Random sessions of long multi-line and one-line entries, with pins and tags: every answer's
    text is within the budget by the estimate, and no entry is shown twice."""
    rng = random.Random(11)
    words = "alpha beta gamma delta cookie auth parser token retry cache valve tank".split()
    for trial in range(40):
        journal = Journal()
        for number in range(rng.randint(1, 12)):
            sentences = (" ".join(rng.choices(words, k=rng.randint(3, 12))) + "." for _ in range(rng.randint(1, 60)))
            joiner = rng.choice([" ", "\n"])
            journal.entry(f"{number} " + joiner.join(sentences), pinned=rng.random() < 0.1)
        budget = rng.choice([60, 120, 250, 500, 1000])
        result = recall(journal.state(), rng.choice(["cookie auth", "valve tank retry", "parser"]), budget)
        assert MODEL.estimate(result.text) <= result.used_tokens <= budget, (trial, budget)
        assert len({entry.id for entry in result.entries}) == len(result.entries)


def test_a_long_one_line_entry_is_cut_to_the_sentence_that_answers() -> None:
    """An entry written as one long line (a commit message, a model's note) is cut to the sentences
    densest in the query's words (text/long_lines.py), not to the characters around its first
    match: 'fsyncs' and 'round' stand alone early, together with 'new document' later."""
    journal = Journal()
    note = journal.entry(
        "store writer: each group round syncs on its own thread. "
        + " ".join(f"Step {n} of the folder sweep reads nothing new from the disk here." for n in range(12))
        + " A new document's round is four fsyncs: the file, its folder, docs/ and the catalog. "
        + " ".join(f"Row {n} of the table keeps the same figures as before the change." for n in range(12))
    )
    result = recall(journal.state(), "How many fsyncs does a new document's round take?", 80)
    assert [e.id for e in result.entries] == [note]
    assert "A new document's round is four fsyncs: the file, its folder, docs/ and the catalog." in result.text
    assert MODEL.estimate(result.text) <= result.used_tokens <= 80


def test_room_a_later_passage_leaves_unused_goes_back_to_the_first() -> None:
    """The second cut's passage is one short line (the line after it is too long to add), so it
    fills little of its share: that room goes back to the first-ranked cut, which shows more of
    its lines, and the answer fills the budget (before: about two thirds of it). The first holds
    two of the query's three words, so it keeps two thirds of the room, not all of it."""
    journal = Journal()
    journal.entry("the valve 1 has mould\n" + "x" * 4000 + "\n" + "filler here " * 200)
    first = journal.entry(_long_note("zebrafish", 0))
    state = journal.state()
    assert next(rank(state, unique_terms("zebrafish valve mould"), frozenset())[0]).id == first
    result = recall(state, "zebrafish valve mould", 400)
    assert len(result.entries) == 2
    shown = {entry.id: entry for entry in result.entries}
    assert shown[first].tokens > 300  # more than the two thirds of the room its share was
    assert 0.9 * 400 <= result.used_tokens <= 400 and MODEL.estimate(result.text) <= result.used_tokens


def test_a_first_match_holding_every_word_of_the_query_keeps_the_room_it_needs() -> None:
    """Two long matches; the first holds every word of the query and its answer lies ten lines past
    the match: it keeps the room (the share of the query's words it holds, here all) and shows the
    answer, where half the room did not reach it and showed the second, which holds one word."""
    journal = Journal()
    other = journal.entry("zebrafish " + "\n".join(f"other line {n} with plain words of no use" for n in range(60)))
    lines = [f"line {n}: routine status report number {n} for week 0" for n in range(40)]
    lines[12] = "the zebrafish tank leaks at valve seven"
    lines[22] = "the fix: a new gasket, fitted on Monday"
    first = journal.entry("\n".join(lines))
    state = journal.state()
    assert next(rank(state, unique_terms("zebrafish tank valve"), frozenset())[0]).id == first
    result = recall(state, "zebrafish tank valve", 300)
    assert "the fix: a new gasket" in result.text and [e.id for e in result.entries] == [first]
    assert "(1 more match not shown: raise budget_tokens)" in result.text and other not in result.text
    assert MODEL.estimate(result.text) <= result.used_tokens <= 300


def test_two_matches_holding_every_word_of_the_query_share_the_room() -> None:
    """An identifier asked for, named by the note that made it and by a later one: both hold every
    word of the query, so which answers is no surer than their ranking, and both are shown cut, not
    the later one alone in all the room (recall_bench at 250 tokens: 'rarity_weights', 'MAX_REBUILDS',
    '_config._problems' ranked the entry that answers second, and it was not shown)."""
    journal = Journal()
    made = journal.entry(_long_note("zebrafish_valve", 0).replace("tank leaks at valve 0", "was made: it counts leaks"))
    named = journal.entry(_long_note("zebrafish_valve", 1).replace("tank leaks at valve 1", "is renamed in review"))
    state = journal.state()
    ranked, _ = rank(state, unique_terms("zebrafish_valve"), frozenset())
    assert [item.id for item in ranked][:2] == [named, made]  # the later one ranks first
    result = recall(state, "zebrafish_valve", 250)
    assert [e.id for e in result.entries] == [made, named]
    assert "zebrafish_valve was made: it counts leaks" in result.text and "is renamed in review" in result.text
    assert MODEL.estimate(result.text) <= result.used_tokens <= 250


def test_room_the_cuts_leave_goes_to_the_next_matches() -> None:
    """The first match's passage is its one short line (the next is far too long to add), so most of
    the room kept for it is left once whole matches below it filled theirs: it goes to the matches
    that did not fit then, best first, each cut in what is left (here two short notes, whole, and the
    long note that answers), not left unused (recall_bench at 250 tokens: 'quick_tcp_server' showed
    150, the entry that answers, ranked second, not at all)."""
    journal = Journal()
    lines = [f"line {k}: routine status report number {k} for week 0" for k in range(40)]
    lines[20] = "the zebrafish fix: a new gasket, fitted on Monday"
    answer = journal.entry("\n".join(lines))
    notes = [journal.entry(f"zebrafish valve note {n}: fed at noon " + "ok " * 30) for n in range(5)]
    first = journal.entry("zebrafish valve tank\n" + "filler " * 600)
    state = journal.state()
    ranked, _ = rank(state, unique_terms("zebrafish tank valve"), frozenset())
    assert [item.id for item in ranked] == [first, *reversed(notes), answer]
    result = recall(state, "zebrafish tank valve", 300)
    assert [e.id for e in result.entries] == [answer, *notes, first]
    assert "the zebrafish fix: a new gasket" in result.text and "more match" not in result.text
    assert MODEL.estimate(result.text) <= result.used_tokens <= 300
