"""Recall ranking and packing: pins first, budget kept, what did not fit is said."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import pytest

from ctxtrio.memory.packing import pack_recall
from ctxtrio.memory.ranking import rank, recent_candidates
from ctxtrio.text.terms import unique_terms
from ctxtrio.text.tokens import TokenModel

from .state.test_state import Journal

if TYPE_CHECKING:
    from ctxtrio.memory.model import RecallResult
    from ctxtrio.memory.state.columns import SessionState
    from ctxtrio.store.records import JSON

MODEL = TokenModel.flat()


def recall(
    state: SessionState, query: str | None, budget: int, *, limit: int | None = None, tags: frozenset[str] = frozenset()
) -> RecallResult:
    terms = unique_terms(query) if query else []
    if terms:
        ranked, matched = rank(state, terms, tags)
        return pack_recall(
            state,
            ranked,
            matched=matched,
            budget_tokens=budget,
            limit=limit,
            tags=tags,
            mode="query",
            model=MODEL,
            query_terms=terms,
        )
    candidates = list(recent_candidates(state, tags))
    return pack_recall(
        state,
        iter(candidates),
        matched=len(candidates),
        budget_tokens=budget,
        limit=limit,
        tags=tags,
        mode="recent",
        model=MODEL,
    )


def test_pins_come_first_then_matches_oldest_first() -> None:
    """Output order: pins (chronological), then matches (chronological, most recent last)."""
    journal = Journal()
    late_pin = journal.entry("goal: ship the parser", pinned=True)
    a = journal.entry("parser fails on tabs")
    journal.entry("unrelated lunch note")
    b = journal.entry("parser fixed for tabs")
    early_pin = journal.entry("constraint: no new deps", pinned=True)
    result = recall(journal.state(), "parser tabs", 4000)
    assert [e.id for e in result.entries] == [late_pin, early_pin, a, b]
    assert result.pinned_shown == 2 and result.matched == 2 and result.not_fit == 0
    assert result.text.splitlines()[0].startswith(f"[{late_pin} note pinned]")


def test_budget_is_never_exceeded_by_the_estimate() -> None:
    """For random sessions and budgets the whole rendered text stays within the budget."""
    rng = random.Random(5)
    words = "alpha beta gamma delta cookie auth parser token retry cache 数据库 결정했다 привет café".split()
    for trial in range(60):
        journal = Journal()
        for number in range(rng.randint(1, 60)):
            text = " ".join(rng.choices(words, k=rng.randint(1, 40)))
            tags: list[JSON] = list(rng.sample(["a", "b", "c"], rng.randint(0, 2)))
            journal.entry(f"{number} {text}", pinned=rng.random() < 0.1, tags=tags)
        state = journal.state()
        budget = rng.choice([50, 60, 80, 120, 300, 1000])
        query = rng.choice([None, "cookie auth", "数据库", "zzz", "café retry"])
        result = recall(state, query, budget, limit=rng.choice([None, 1, 5]))
        assert MODEL.estimate(result.text) <= result.used_tokens <= budget, (trial, result.text)


def test_pins_that_do_not_fit_are_named_never_dropped_silently() -> None:
    """When pins alone exceed the budget, those that fit are shown and the rest named."""
    journal = Journal()
    pins = [journal.entry(f"constraint {n}: " + "word " * 30, pinned=True) for n in range(5)]
    result = recall(journal.state(), None, 80)
    shown = [e.id for e in result.entries]
    assert shown and set(shown) | set(result.pins_not_fit) == set(pins)
    assert all(pin in result.text for pin in result.pins_not_fit)
    assert "pins not shown, too little room in budget_tokens" in result.text


def test_matches_that_do_not_fit_are_counted() -> None:
    """The closing line says how many matches were left out."""
    journal = Journal()
    for number in range(30):
        journal.entry(f"cookie note {number} " + "filler " * 10)
    result = recall(journal.state(), "cookie", 100)
    assert result.matched == 30
    assert result.not_fit == 30 - len(result.entries)
    assert f"({result.not_fit} more matches not shown: raise budget_tokens)" in result.text


def test_an_entry_larger_than_the_budget_is_cut_around_the_match() -> None:
    """When every match is over budget, the best is shown cut around its matching line, with cut marks."""
    journal = Journal()
    filler = "\n".join(f"line {n}: " + "routine status report " * 4 for n in range(40))
    journal.entry("zebrafish appear once here\n" + filler)
    best = journal.entry(filler + "\nthe zebrafish tank leaks at valve seven\n" + filler)
    journal.entry("unrelated " * 200)
    result = recall(journal.state(), "zebrafish tank valve", 120)
    assert [e.id for e in result.entries] == [best] and result.matched == 2 and result.not_fit == 1
    shown = result.entries[0].text
    assert "zebrafish tank leaks at valve seven" in shown
    assert shown.startswith("[...] ") and shown.endswith(" [...]") and len(shown) < len(filler)
    assert f"[{best} note] {shown}" in result.text and "(1 more match not shown" in result.text
    assert MODEL.estimate(result.text) <= result.used_tokens <= 120
    assert result.entries[0].tokens == MODEL.estimate(f"[{best} note] {shown}\n")


def test_a_cut_that_reaches_the_end_of_the_entry_has_no_end_mark() -> None:
    """A match on an entry's last line is shown with the lines before it marked as cut, and
    nothing after it: no closing mark claims text that is not there."""
    journal = Journal()
    filler = "\n".join(f"line {n}: " + "routine status report " * 4 for n in range(40))
    last = journal.entry(filler + "\nthe zebrafish tank leaks at valve seven")
    result = recall(journal.state(), "zebrafish tank valve", 120)
    assert [e.id for e in result.entries] == [last]
    shown = result.entries[0].text
    assert shown.startswith("[...] ") and shown.endswith("the zebrafish tank leaks at valve seven")


def test_room_left_after_whole_entries_takes_the_next_one_cut() -> None:
    """A small newest entry and a huge older one: recent mode shows both, the older cut; a query too."""
    journal = Journal()
    older = journal.entry("cookie policy details " + "clause " * 600)
    newest = journal.entry("short cookie note")
    result = recall(journal.state(), None, 200)
    assert [e.id for e in result.entries] == [older, newest] and result.not_fit == 0
    assert result.entries[0].text.endswith(" [...]") and MODEL.estimate(result.text) <= 200
    assert 150 < result.used_tokens <= 200
    queried = recall(journal.state(), "cookie policy", 200)
    assert [e.id for e in queried.entries] == [older, newest] and queried.entries[0].text.startswith("cookie policy")
    assert len(recall(journal.state(), None, 60).entries) == 1  # under 64 tokens left: no cut


def test_a_csv_entry_over_budget_is_cut_to_fill_the_budget() -> None:
    """A CSV entry larger than the budget is cut to most of the budget under the cold
    estimate, however many shrinks that takes (three gave up: 19 of 1,000 tokens shown)."""
    cold, rng = TokenModel.cold(), random.Random(1)
    for _ in range(12):
        journal = Journal()
        rows = (",".join(str(rng.randint(0, 99999)) for _ in range(8)) for _ in range(rng.randint(100, 400)))
        journal.entry("id,a,b,c,d,e,f,g\n" + "\n".join(rows))
        state = journal.state()
        for budget in (300, 1000, 1500):
            candidates = list(recent_candidates(state, frozenset()))
            result = pack_recall(
                state,
                iter(candidates),
                matched=1,
                budget_tokens=budget,
                limit=None,
                tags=frozenset(),
                mode="recent",
                model=cold,
            )
            assert 0.85 * budget <= result.used_tokens <= budget, (budget, result.used_tokens)
            assert cold.estimate(result.text) <= budget


def test_no_cut_below_a_few_tokens_of_room() -> None:
    """A budget with no room for a useful cut shows no entry, only what did not fit."""
    journal = Journal()
    journal.entry("cookie " + "word " * 400)
    result = recall(journal.state(), "cookie", 10)
    assert result.entries == () and "1 more match not shown" in result.text
    assert recall(journal.state(), "cookie", 14).entries[0].text.startswith("cookie word")


def test_recency_breaks_equal_relevance() -> None:
    """Of two equally relevant entries, the newer ranks first."""
    journal = Journal()
    journal.entry("deploy failed again")
    newer = journal.entry("deploy failed twice")
    for number in range(5):
        journal.entry(f"filler {number}")
    ranked, matched = rank(journal.state(), ["deploy"], frozenset())
    assert [item.id for item in ranked][:1] == [newer] and matched == 2


def test_recent_mode_returns_the_latest_contiguously() -> None:
    """No usable query: the newest entries, stopping at the first that does not fit (the newest itself is cut)."""
    journal = Journal()
    ids = [journal.entry(f"entry {n}") for n in range(10)]
    newest = journal.entry("x " * 200)  # too big for the budget: shown cut, and recent mode stops here
    state = journal.state()
    result = recall(state, None, 60)
    assert result.mode == "recent" and [e.id for e in result.entries] == [newest]
    assert result.entries[0].text.startswith("x x") and result.entries[0].text.endswith(" [...]")
    assert result.not_fit == 10 and MODEL.estimate(result.text) <= 60
    older = recall(state, "the of and", 4000)  # stopwords only: no usable terms
    assert older.mode == "recent" and [e.id for e in older.entries][-1] == state.order[-1].id
    assert ids[0] in [e.id for e in older.entries]


def test_limit_caps_matches_but_not_pins() -> None:
    """limit counts unpinned entries; pins are always included."""
    journal = Journal()
    pin = journal.entry("pinned goal", pinned=True)
    for number in range(6):
        journal.entry(f"match {number}")
    result = recall(journal.state(), "match", 4000, limit=2)
    assert [e.id for e in result.entries][0] == pin
    assert len(result.entries) == 3 and result.not_fit == 4
    assert "(4 more matches not shown: raise limit)" in result.text


def test_tags_filter_matches_any_of_them() -> None:
    """A tags filter keeps matches with any of the tags; pins stay."""
    journal = Journal()
    pin = journal.entry("anchor", pinned=True)
    auth = journal.entry("login bug", tags=["auth"])
    journal.entry("login style", tags=["ui"])
    db = journal.entry("login table", tags=["db", "auth"])
    result = recall(journal.state(), "login", 4000, tags=frozenset({"auth"}))
    assert [e.id for e in result.entries] == [pin, auth, db]
    assert result.matched == 2


def test_same_text_is_shown_once() -> None:
    """Two live entries with the same text (a restore, another process) appear once."""
    journal = Journal()
    journal.entry("use postgres")
    journal.entry("use postgres ")
    result = recall(journal.state(), "postgres", 4000)
    assert len(result.entries) == 1 and result.matched == 2 and result.not_fit == 0


@pytest.mark.parametrize("query", ["데이터베이스", "数据", "データ", "cafe", "café", "привет"])
def test_unicode_entries_are_found_by_their_words(query: str) -> None:
    """Korean, Chinese, Japanese, accented and Cyrillic entries are found by words from them."""
    journal = Journal()
    texts = {
        "데이터베이스": "결정: 데이터베이스는 PostgreSQL로 바꾼다",
        "数据": "我们决定使用新的数据库",
        "データ": "データベースを移行する",
        "café": "Réunion au café demain",
        "cafe": "Réunion au café demain",
        "привет": "Сказал привет команде",
    }
    journal.entry("unrelated english note")
    target = journal.entry(texts[query])
    result = recall(journal.state(), query, 4000)
    ids = [e.id for e in result.entries]
    if query == "cafe":
        assert target not in ids  # accents are kept: café is not cafe
    else:
        assert ids == [target]


def test_identifier_parts_find_camel_case() -> None:
    """'user name' finds getUserName."""
    journal = Journal()
    target = journal.entry("getUserName returns None for guests")
    journal.entry("username column is unique")
    result = recall(journal.state(), "user name", 4000)
    assert [e.id for e in result.entries] == [target]


def test_a_pin_too_long_for_the_budget_shows_its_passage_when_the_query_matches_it() -> None:
    """A pinned 14,000-character log (stdio, budget 2000) asked 'batch 117' at 500 tokens answered only
    '(pins not shown, too little room in budget_tokens: e2)', while the same entry unpinned showed its lines
    around batch 117: pinning made an entry unrecallable. A pin that does not fit is now cut around its
    passage like a match, and no longer named as not shown; pins that fit come first as before."""
    journal = Journal()
    goal = journal.entry("goal: keep the workers fast", pinned=True)
    log = "\n".join(f"worker[{n % 7}] INFO processed batch {n} in {n * 13 % 997} ms" for n in range(220))
    big = journal.entry(log, pinned=True)
    note = journal.entry("Decision: batch size stays 500.")
    result = recall(journal.state(), "batch 117", 300)
    shown = [entry.id for entry in result.entries]
    assert shown[0] == goal and big in shown and note in shown
    assert "processed batch 117 in" in result.text and "[...]" in result.text
    assert big not in result.pins_not_fit and "pins not shown" not in result.text
    assert MODEL.estimate(result.text) <= result.used_tokens <= 300
    unrelated = recall(journal.state(), "lunch", 300)  # a pin the query does not match is still only named
    assert big in unrelated.pins_not_fit and "processed batch" not in unrelated.text
