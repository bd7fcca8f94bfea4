"""Passages: the window of whole lines densest in the query's terms, within the budget, marked where cut."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.text.cutting import CUT_MARK
from ctxtrio.text.headings import unheaded_terms
from ctxtrio.text.naming import defined_name
from ctxtrio.text.passages import best_passage, marked_text, passage_score
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel
from ctxtrio.text.words import rarity_weights

MODEL = (
    TokenModel.flat()
)  # fixed rates: the budgets below are sized in them (cold rates change with the families covered)
FILLER = [f"Line {n} says nothing in particular about anything here." for n in range(60)]


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _shown(text: str, query: str, budget: int) -> str:
    passage = best_passage(text, query_terms(query), budget, MODEL)
    assert passage is not None
    return marked_text(text, passage)


def _window(text: str, focus: list[str], budget: int, rarity: dict[str, float], asked: list[str]) -> str:
    """The text shown of the window :func:`best_passage` finds, weighed by ``rarity``, for a query asking ``asked``."""
    passage = best_passage(text, focus, budget, MODEL, rarity=rarity, named=asked)
    assert passage is not None
    return marked_text(text, passage)


def test_the_window_holding_all_the_words_close_together_wins() -> None:
    """Terms scattered over the text lose to the few lines that hold them all."""
    lines = list(FILLER)
    lines[5] = "The checkpoint happens often."
    lines[20] = "A timeout is set elsewhere."
    lines[40] = "The checkpoint timeout defaults to five minutes."
    shown = _shown(_text(lines), "checkpoint timeout", 60)
    assert "defaults to five minutes" in shown and "happens often" not in shown


def test_words_side_by_side_as_in_the_query_beat_words_apart() -> None:
    """Two lines hold both words; the one where they stand together, in query order, is chosen."""
    lines = list(FILLER)
    lines[10] = "Cache sizes: the lru module keeps a small cache."
    lines[45] = "Call lru_cache with maxsize=None for an unbounded cache."
    shown = _shown(_text(lines), "lru_cache maxsize", 40)
    assert "maxsize=None" in shown and "small cache" not in shown


def test_a_definition_beats_a_mention() -> None:
    """A line that defines the name asked for is preferred to one that only uses it."""
    lines = list(FILLER)
    lines[8] = "    result = py_scanstring(text, 0)"
    lines[50] = "def py_scanstring(s, end, strict=True):"
    shown = _shown(_text(lines), "py scanstring", 40)
    assert "def py_scanstring" in shown


def test_cut_marks_only_where_text_was_left_out() -> None:
    """A window at the start has no leading mark; blank lines left out are not marked; inner ones are."""
    text = "alpha beta gamma\nsecond line\n\n\n"
    assert _shown(text, "alpha", 200) == "alpha beta gamma\nsecond line"
    lines = list(FILLER)
    lines[30] = "The needle is here."
    shown = _shown(_text(lines), "needle", 30)
    assert shown.startswith(CUT_MARK + " ") and shown.endswith(" " + CUT_MARK)


def test_passages_are_whole_lines_within_every_budget() -> None:
    """At budgets from 25 to 400 tokens the passage is whole lines, holds the match and fits."""
    lines = list(FILLER)
    lines[33] = "Only this line mentions the frobnicator setting."
    text = _text(lines)
    for budget in (25, 40, 80, 150, 400):
        passage = best_passage(text, query_terms("frobnicator"), budget, MODEL)
        assert passage is not None
        shown = marked_text(text, passage)
        assert MODEL.estimate(shown) <= budget, budget
        assert "frobnicator" in shown
        assert passage.start == 0 or text[passage.start - 1] == "\n"
        assert text[passage.end] == "\n"
        assert passage.first_line <= 34 <= passage.last_line and passage.lines == len(lines) + 1


def test_a_line_too_long_for_the_budget_gives_no_passage() -> None:
    """When the only matching line is longer than the budget, the caller must cut by characters."""
    text = "short\n" + "word " * 400 + "needle " + "word " * 400 + "\nshort\n"
    assert best_passage(text, ["needle"], 40, MODEL) is None


def test_a_long_line_still_scores_for_ranking() -> None:
    """An unwrapped paragraph longer than the scoring unit is scored as one line, not as nothing."""
    paragraph = " ".join(f"word{n}" for n in range(120))
    assert passage_score(paragraph, ["word1", "word2", "word3"], 50, 0.3) >= 3
    assert passage_score("nothing to see", ["word1"], 50, 0.3) == 0.0


FIXTURES = Path(__file__).parent / "fixtures"


def test_html_comment_blocks_are_left_out_of_the_window() -> None:
    """Node's `<!-- YAML ... -->` change history under an API heading is not shown (a cut mark
    stands for it), so the sentence after it fits where it did not."""
    text = (FIXTURES / "node_timers.md").read_text(encoding="utf-8")
    section = text[text.index("### `immediate.unref()`") : text.index("### `immediate[Symbol.dispose]()`")]
    assert "<!-- YAML" in section
    for budget in (60, 80, 120):
        shown = _shown(section, "immediate.unref", budget)
        assert "<!--" not in shown and "added: v9.7.0" not in shown and "-->" not in shown, budget
        assert f"### `immediate.unref()`\n\n{CUT_MARK}\n* Returns: {{Immediate}}" in shown, budget
        assert "When called, the active `Immediate` object will not require the Node.js event" in shown, budget
        assert MODEL.estimate(shown) <= budget


def test_a_comment_the_text_starts_or_ends_inside_is_hidden_too() -> None:
    """A chunk cut inside a comment block: its lines up to `-->`, or from `<!--` to the end, are not shown."""
    lines = ["  pr-url: https://github.com/nodejs/node/pull/1", "-->", "", "The answer follows the history here."]
    shown = _shown(_text([*lines, "", "<!-- YAML", "added: v1.0.0"]), "answer history", 40)
    assert shown == "The answer follows the history here."


def test_a_window_takes_the_rest_of_the_sentences_it_cuts() -> None:
    """The window around a term in mid-sentence starts where that sentence starts (the line
    before goes on into it) and ends where it ends, before growing as usual."""
    prose = (
        "The sequence functions are listed below.\n\n"
        "Returns the value most recently obtained by nextval for this sequence in the\n"
        "current session. An error is reported if nextval has never been called for\n"
        "this sequence in this session. Because this is returning a session-local\n"
        "value, it gives a predictable answer whether or not other sessions have\n"
        "executed nextval since the current session did.\n"
    )
    shown = _shown(prose, "called", 70)
    assert shown.startswith(f"{CUT_MARK} Returns the value most recently obtained by nextval")
    assert "this sequence in this session. Because" in shown
    log = _text([f"2026-12-01T10:00:{n:02d} INFO step {n} called ok" for n in range(30)])
    assert _shown(log, "step 12", 30).count("\n") >= 1  # log records start no sentence of the line above


def test_a_rare_word_anchors_the_window_over_a_common_one() -> None:
    """Weighed by rarity, the window settles on the lines about the rare name asked for, not on
    a far run that adds a common word; unweighed, it stretches to take the common word in."""
    lines = [
        "currval ( regclass ) returns bigint",
        "",
        "Returns the value most recently obtained by nextval for this sequence in the",
        "current session. An error is reported if nextval has never been called.",
        "",
        *FILLER[:3],
        "This one is like currval, but it takes no argument.",
        "It fails if nextval has not been called in the current session.",
        *FILLER[3:6],
        "A value is drawn before the transaction commits.",
        *FILLER[10:40],
    ]
    text = _text(lines)
    words = query_terms("currval called before nextval session")
    rarity = rarity_weights({"currval": 13, "called": 399, "before": 751, "nextval": 25, "session": 348}, 4699)
    assert rarity["currval"] == 1.0 and rarity["before"] < 0.2
    plain = best_passage(text, words, 150, MODEL)
    weighed = best_passage(text, words, 150, MODEL, rarity=rarity)
    assert plain is not None and weighed is not None
    assert "drawn before" in marked_text(text, plain) and "currval ( regclass )" not in marked_text(text, plain)
    assert marked_text(text, weighed).startswith("currval ( regclass ) returns bigint")
    assert rarity_weights({}, 10) == {} and rarity_weights({"x": 10}, 10) == {"x": 1.0}


def test_a_large_window_shows_the_sentence_of_its_rarest_word_past_it() -> None:
    """shutil's real rmtree entry: the window settles on `.. function:: rmtree(..., onerror=None)`
    and cannot grow past the note below it to `onerror`'s own paragraph; weighed by rarity and
    given 200 tokens or more, it shows that paragraph's sentence apart, after a cut mark on a line
    of its own, within the budget. Unweighed, or smaller, the window is as before. Given 400, the
    window, weighed or not (it grows into no entry above its own), reaches that paragraph itself."""
    text = (FIXTURES / "python_shutil_rmtree.rst.txt").read_text(encoding="utf-8")
    entry = text[
        text.index("   .. versionchanged:: 3.8\n      Platform") : text.index("   .. audit-event:: shutil.rmtree")
    ]
    words, rarity = query_terms("rmtree onerror"), {"rmtree": 0.88, "onerror": 1.0}
    answer = "   If *onerror* is provided, it must be a callable that accepts three\n   parameters:"
    for budget in (250, 300, 400):
        weighed = best_passage(entry, words, budget, MODEL, rarity=rarity)
        plain = best_passage(entry, words, budget, MODEL)
        assert weighed is not None and plain is not None
        shown = marked_text(entry, weighed)
        assert ".. function:: rmtree(path, ignore_errors=False, onerror=None" in shown, budget
        apart = f"\n{CUT_MARK}\n{answer}" in shown
        assert (apart if budget < 400 else answer in shown) and MODEL.estimate(shown) <= budget, budget
        assert budget == 400 or "accepts three" not in marked_text(entry, plain), budget
    small = best_passage(entry, words, 199, MODEL, rarity=rarity)
    assert small is not None and "accepts three" not in marked_text(entry, small)
    assert [entry[start:end].strip() for start, end in small.hidden] == [".. index:: single: directory; deleting"]


def test_a_line_of_common_words_alone_does_not_stretch_the_window() -> None:
    """Node's real modules.md, Caching: weighed by rarity, a line holding only words far more common
    than the rarest (`RESOLVED_PATH` for "path", 0.05) starts no window, so the window on the
    caveats is not stretched back over the pseudo-code to reach it and has room for the answer."""
    text = (FIXTURES / "node_modules_caching.md").read_text(encoding="utf-8")
    words = query_terms("the same module is loaded twice when I spell its path with different capital letters")
    rarity = {"same": 0.07, "module": 0.04, "loaded": 0.2, "twice": 0.36, "spell": 1.0, "path": 0.05}
    rarity |= {"different": 0.15, "capital": 1.0, "letters": 0.76}  # what Node 18's API reference gives them
    passage = best_passage(text, words, 350, MODEL, rarity=rarity)
    assert passage is not None
    shown = " ".join(marked_text(text, passage).split())
    assert "different resolved filenames can point to the same file" in shown
    assert "RESOLVED_PATH" not in shown and MODEL.estimate(marked_text(text, passage)) <= 350


def test_a_window_below_the_definition_of_the_rarest_word_shows_it_apart() -> None:
    """Python's real `-W` entry: the headings already say `-W`, so the window looks for "python" and
    "option" and settles on `:option:`-W` options` far below the entry's start; given 200 tokens or
    more and the query's words as asked, it shows `.. cmdoption:: -W arg` and its first sentence
    above it, after which a cut mark stands for the lines between, within the budget. Without the
    words as asked, or once the window reaches the definition itself, nothing is shown apart."""
    text = (FIXTURES / "python_cmdline_W.rst.txt").read_text(encoding="utf-8")
    asked = query_terms("python -W option")
    focus = unheaded_terms(asked, ("Miscellaneous options", "cmdoption -W", "cmdline"))
    rarity = {"python": 0.04, "w": 1.0, "option": 0.5}
    lead = ".. cmdoption:: -W arg\n\n   Warning control. Python's warning machinery by default prints warning\n"
    assert focus == ["python", "option"]
    for budget in (250, 450, 600):
        passage = best_passage(text, focus, budget, MODEL, rarity=rarity, named=asked)
        plain = best_passage(text, focus, budget, MODEL, rarity=rarity)
        assert passage is not None and plain is not None
        shown = marked_text(text, passage)
        assert shown.startswith(lead) and f"sys.stderr`.\n{CUT_MARK}\n" in shown, budget  # its link target hidden
        assert "Invalid\n   :option:`-W` options are ignored" in shown and MODEL.estimate(shown) <= budget, budget
        assert "Warning control" not in marked_text(text, plain), budget
    whole = best_passage(text, focus, 1200, MODEL, rarity=rarity, named=asked)
    assert whole is not None and whole.hidden == () and "Warning control" in marked_text(text, whole)
    small = best_passage(text, focus, 150, MODEL, rarity=rarity, named=asked)  # below 200: the entry's head
    assert small is not None and marked_text(text, small).startswith(lead)  # (tests/text/test_entry_heads.py)


def test_the_name_a_line_defines() -> None:
    """A name at a line's start, after a directive or keyword, followed by what follows a defined
    name, is defined; a name ending a sentence is not."""
    assert defined_name(".. cmdoption:: -W arg") == "W"
    assert defined_name("def py_scanstring(s, end, strict=True):") == "py_scanstring"
    assert defined_name("work_mem (integer)") == "work_mem"
    assert defined_name("deadlock_timeout. It is") is None


def test_a_phrase_of_the_query_as_asked_settles_the_window() -> None:
    """PostgreSQL's real VACUUM Description: the page is named VACUUM, so the window looks for lock,
    full and take; "Plain VACUUM (without FULL) ... an exclusive lock is not obtained" holds full and
    lock as well as "VACUUM FULL rewrites ... requires an ACCESS EXCLUSIVE lock" does, and came
    first. Given the words as asked, "VACUUM FULL" is a phrase and its sentence wins."""
    text = (FIXTURES / "pg_sql_vacuum.md").read_text(encoding="utf-8")
    section = text[text.index("## Description") :]
    asked = query_terms("What lock does VACUUM FULL take?")
    focus = unheaded_terms(asked, ("Description", "sql-vacuum"))
    rarity = {"lock": 0.95, "vacuum": 1.0, "full": 0.77, "take": 0.82}  # what PostgreSQL's manual gives them
    assert focus == ["lock", "full", "take"]
    for budget in (100, 120):
        passage = best_passage(section, focus, budget, MODEL, rarity=rarity, named=asked)
        plain = best_passage(section, focus, budget, MODEL, rarity=rarity)
        assert passage is not None and plain is not None
        shown = marked_text(section, passage)
        assert "requires an ACCESS\nEXCLUSIVE lock on each table" in shown and MODEL.estimate(shown) <= budget
        assert "EXCLUSIVE lock on each table" not in marked_text(section, plain), budget


def test_the_definition_of_the_name_itself_beats_one_that_holds_it_as_a_part() -> None:
    """bisect's real insort entries: `insort_left(` holds insort only as a part of its name, so it
    defines insort less than `insort(` under `insort_right(` does; the window for bisect.insort
    settles on the entry of insort itself and shows what it does."""
    text = (FIXTURES / "python_bisect_insort.rst.txt").read_text(encoding="utf-8")
    asked = query_terms("bisect.insort")
    rarity = {"bisect": 0.79, "insort": 1.0}  # what the Python docs give them
    for budget in (100, 150):
        passage = best_passage(text, asked, budget, MODEL, rarity=rarity, named=asked)
        assert passage is not None
        shown = marked_text(text, passage)
        assert "insort(a, x, lo=0, hi=len(a), *, key=None)" in shown, budget
        assert "but inserting *x* in *a* after any existing\n   entries of *x*." in shown, budget
        assert MODEL.estimate(shown) <= budget


def test_the_window_starts_under_its_own_section_not_past_a_heading_inside_the_chunk() -> None:
    """Python's real end of `finally clause` (under `The try statement`) and start of `The with
    statement`, one chunk: the window looks for both/block/return/value (the trail holds try and
    finally) and settled on "wrap the execution of a block" under the with statement. Given the
    trail, its core lies above that heading, and it shows what a return in finally does."""
    text = (FIXTURES / "python_finally_with.rst.txt").read_text(encoding="utf-8")
    asked = query_terms("What happens if both the try block and the finally block return a value?")
    trail = ("The :keyword:`!try` statement", ":keyword:`!finally` clause")
    focus = unheaded_terms(asked, (*trail, "reference"))
    rarity = {"both": 0.41, "try": 0.62, "block": 0.43, "finally": 1.0, "return": 0.08, "value": 0.08}
    assert focus == ["both", "block", "return", "value"]
    answer = "statement executed in the :keyword:`!finally` clause will\nalways be the last one executed::"
    for budget in (100, 200, 300):
        passage = best_passage(text, focus, budget, MODEL, rarity=rarity, named=asked, trail=trail)
        plain = best_passage(text, focus, budget, MODEL, rarity=rarity, named=asked)
        assert passage is not None and plain is not None
        shown = marked_text(text, passage)
        assert answer in shown and MODEL.estimate(shown) <= budget, budget
        assert answer not in marked_text(text, plain), budget


def test_words_on_lines_of_code_count_less_than_in_prose() -> None:
    """contextlib's real suppress entry: `from contextlib import suppress` in its example holds both
    words of contextlib.suppress, `.. function:: suppress(*exceptions)` one, with a definition; the
    example's words count half and the window settles on the entry and what it returns."""
    text = (FIXTURES / "python_contextlib_suppress.rst.txt").read_text(encoding="utf-8")
    asked = query_terms("contextlib.suppress")
    rarity = {"contextlib": 1.0, "suppress": 0.97}  # what the Python docs give them
    for budget in (100, 150):
        passage = best_passage(text, asked, budget, MODEL, rarity=rarity, named=asked)
        assert passage is not None
        shown = marked_text(text, passage)
        assert ".. function:: suppress(*exceptions)\n\n   Return a context manager that suppresses" in shown, budget
        assert MODEL.estimate(shown) <= budget


def test_a_window_grows_into_no_entry_above_its_own() -> None:
    """math's real gcd and isclose entries: the window on `.. function:: isclose(a, b, *,
    rel_tol=1e-09, abs_tol=0.0)` grew a line before for each two after, into the end of gcd's
    entry (its versionadded and versionchanged notes). It now starts at the entry it lies in and
    grows down, to the sentence that says what rel_tol is."""
    text = (FIXTURES / "python_math_isclose.rst.txt").read_text(encoding="utf-8")
    asked = query_terms("math.isclose rel_tol")
    focus = unheaded_terms(asked, ("Number-theoretic and representation functions", "function gcd", "math"))
    rarity = {"math": 0.31, "isclose": 0.81, "reltol": 1.0, "rel": 1.0, "tol": 1.0}  # what the Python docs give them
    for budget in (110, 150, 200, 300):
        shown = _window(text, focus, budget, rarity, asked)
        assert shown.startswith(f"{CUT_MARK} .. function:: isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0)"), budget
        assert "*rel_tol* is the relative tolerance" in shown and MODEL.estimate(shown) <= budget, budget


def test_the_sentence_shown_apart_starts_a_paragraph_about_the_rarest_word() -> None:
    """functools' real lru_cache entry: the window on its signature and the lines after it nearly
    reaches "leaving the *maxsize* at its default value of 128::", which ends an example's
    introduction; the sentence shown apart is the paragraph that starts with maxsize, "If
    *maxsize* is set to None, the LRU feature is disabled", not that line."""
    text = (FIXTURES / "python_functools_lru_cache.rst.txt").read_text(encoding="utf-8")
    asked = query_terms("functools.lru_cache maxsize")
    trail = (":mod:`functools` --- Higher-order functions and operations on callable objects", "decorator lru_cache")
    focus = unheaded_terms(asked, (*trail, "functools"))
    rarity = {"functools": 0.5, "lrucache": 1.0, "lru": 0.94, "cache": 0.38, "maxsize": 0.69}  # the Python docs'
    assert focus == ["maxsize"]
    for budget in (300, 350, 400):
        shown = _window(text, focus, budget, rarity, asked)
        assert shown.startswith(f"{CUT_MARK} .. decorator:: lru_cache(user_function)"), budget
        assert "If *maxsize* is set to ``None``, the LRU feature is disabled" in shown, budget
        assert MODEL.estimate(shown) <= budget


def test_of_equally_good_windows_one_inside_an_entry_wins() -> None:
    """threading's real Event methods: "wait" is named in the entries of set() and clear() and
    defined by `.. method:: wait(timeout=None)` below them; the run from the first mention to the
    definition scores what the definition alone does, and came first. The run inside one entry
    wins, and the window shows what wait does."""
    whole = (Path(__file__).parents[1] / "docs" / "fixtures" / "python_threading.rst.txt").read_text(encoding="utf-8")
    start = whole.index("   Class implementing event objects.")
    text = whole[start : whole.index("Previously, the method always returned ``None``.", start)]
    asked = query_terms("threading.Event.wait")
    focus = unheaded_terms(asked, ("class Event", "method set", "threading"))
    rarity = {"threading": 1.0, "event": 0.47, "wait": 0.88}  # what the Python docs give them
    assert focus == ["wait"]
    for budget in (80, 120, 150):
        shown = _window(text, focus, budget, rarity, asked)
        assert shown.startswith(f"{CUT_MARK}    .. method:: wait(timeout=None)\n"), budget
        assert "Block until the internal flag is true." in shown and MODEL.estimate(shown) <= budget, budget
