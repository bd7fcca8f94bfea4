"""Passages: the words of a query a line holds. Identifiers and the names a line defines, headings, inflections."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.text.headings import heading_share, unheaded_terms
from ctxtrio.text.passages import passage_score
from ctxtrio.text.query import query_terms
from ctxtrio.text.stems import light_stem

from .test_passages import FILLER, _shown, _text

FIXTURES = Path(__file__).parent / "fixtures"


def test_a_name_ending_a_sentence_is_not_a_definition() -> None:
    """'deadlock_timeout.' closing a sentence loses to 'deadlock_timeout (integer)' heading its entry."""
    lines = list(FILLER)
    lines[5] = "deadlock_timeout (integer)"
    lines[6] = "The default is one second (1s)."
    lines[40] = "deadlock_timeout."
    shown = _shown(_text(lines), "deadlock_timeout", 40)
    assert "deadlock_timeout (integer)" in shown and "one second" in shown


def test_an_identifier_counts_as_one_word_of_the_query() -> None:
    """pg_hba's three terms do not outweigh two other words of the query held together elsewhere."""
    lines = list(FILLER)
    lines[3] = "The pg_hba file is read at start."
    lines[45] = "If one record is chosen and the authentication fails, later records are not considered."
    shown = _shown(_text(lines), "pg_hba record authentication", 40)
    assert "authentication fails" in shown


def test_rest_directives_and_marked_up_names_are_definitions() -> None:
    """'.. function:: asyncio.gather(...)' and '``work_mem`` (integer)' define what they name."""
    lines = list(FILLER)
    lines[4] = "Call asyncio.gather to gather them."
    lines[50] = ".. function:: asyncio.gather(*aws, return_exceptions=False)"
    assert ".. function:: asyncio.gather" in _shown(_text(lines), "asyncio gather", 40)
    lines = list(FILLER)
    lines[4] = "Raise work_mem when sorts spill."
    lines[50] = "``work_mem`` (integer)"
    assert "``work_mem`` (integer)" in _shown(_text(lines), "work_mem", 40)


def test_a_c_api_entry_defines_the_name_after_its_type() -> None:
    """Python 3.11's c-api/refcounting.rst: ``Py_INCREF`` shows its entry ``.. c:function:: void
    Py_INCREF(PyObject *o)``, not Py_NewRef's example below, which names it twice (the entry's
    name was taken to be ``void``, and the example won)."""
    text = (FIXTURES / "python_capi_refcounting.rst.txt").read_text(encoding="utf-8")
    for budget in (40, 100):
        shown = _shown(text, "Py_INCREF", budget)
        assert ".. c:function:: void Py_INCREF(PyObject *o)" in shown
        assert "Increment the reference count for object *o*." in shown


def test_one_part_of_an_identifier_does_not_stand_for_it() -> None:
    """``work_mem (integer)`` neither holds nor defines ``hash_mem_multiplier``; its own entry wins."""
    lines = list(FILLER)
    lines[3] = "work_mem (integer)"
    lines[4] = "Sets the memory of a sort."
    lines[40] = "hash_mem_multiplier (floating point)"
    lines[41] = "The default value is 2.0."
    shown = _shown(_text(lines), "hash_mem_multiplier", 30)
    assert "The default value is 2.0." in shown and "work_mem" not in shown
    spelled = list(FILLER)
    spelled[20] = "The hash mem multiplier scales the memory limit."
    assert "scales the memory" in _shown(_text(spelled), "hash_mem_multiplier", 30)


def test_headings_hold_the_words_they_name() -> None:
    """A trail and a document name hold query words as text does; what they hold is not looked for again."""
    terms = query_terms("os.makedirs exist_ok")
    assert heading_share(("Files", "function makedirs", "os"), terms) == 2 / 3
    assert unheaded_terms(terms, ("function makedirs", "os")) == ["existok", "exist", "ok"]
    assert unheaded_terms(terms, ("os makedirs exist_ok",)) == terms  # all held: look for all
    assert unheaded_terms(terms, ("Other",)) == terms


def test_ranking_matches_words_that_differ_only_by_inflection() -> None:
    """For ranking, 'raise' is held by 'raised' and 'fails' by 'fail', in text and headings alike;
    the window shown still looks for the words as written (a line saying 'raise' wins there)."""
    terms = query_terms("subprocess raise fails")
    said = "If the process fails, CalledProcessError will be raised by subprocess."
    assert passage_score(said, terms, 120, 0.25) > passage_score(said, query_terms("subprocess"), 120, 0.25) + 1.5
    assert heading_share(("Raising exceptions", "subprocess"), terms) == 2 / 3
    text = _text([*FILLER[:20], said, *FILLER[20:40], "subprocess: raise on fails.", *FILLER[40:]])
    assert "raise on fails" in _shown(text, "subprocess raise fails", 40)


def test_light_stems_join_inflections_and_leave_short_words() -> None:
    """raise/raised/raises/raising share a stem; 'process' and 'status' keep theirs; 'use' is too short."""
    assert {light_stem(w) for w in ("raise", "raised", "raises", "raising")} == {"rais"}
    assert [light_stem(w) for w in ("loads", "lines", "process", "processes", "status", "use", "utf8")] == [
        "load", "lin", "process", "process", "status", "use", "utf8",
    ]  # fmt: skip


def test_a_consonant_doubled_for_the_suffix_is_undone() -> None:
    """skipped/skip, scanning/scan, committed/commit share a stem; a double of the word's own
    (called, passed, stuffed) stays, and so does one that would leave 2 letters (added)."""
    assert {light_stem(w) for w in ("skip", "skips", "skipped", "skipping")} == {"skip"}
    assert [light_stem(w) for w in ("scanning", "committed", "running", "stopped", "embedded")] == [
        "scan", "commit", "run", "stop", "embed",
    ]  # fmt: skip
    assert [light_stem(w) for w in ("called", "passed", "stuffed", "buzzing", "added")] == [
        "call", "pass", "stuff", "buzz", "add",
    ]  # fmt: skip
