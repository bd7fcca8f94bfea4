"""Phrases of the query as asked, in prose only; the lines of code and output a text holds; its inner sections."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.text.literal import literal_lines
from ctxtrio.text.phrases import asked_phrases
from ctxtrio.text.query import query_terms
from ctxtrio.text.sections import away_lines, entry_start, entry_starts, inner_headings
from ctxtrio.text.words import held_words, identifier_parts, line_terms, word_groups

FIXTURES = Path(__file__).parent / "fixtures"


def _phrase_lines(text: str, looked_for: list[str], asked: list[str]) -> list[str]:
    """The lines ``asked_phrases`` finds a phrase of ``asked`` on, while looking for ``looked_for``."""
    raws = text.split("\n")
    group = word_groups(tuple(looked_for), stem=False)
    per_line = line_terms(text, frozenset(looked_for + asked))
    found = [held_words(terms, group, identifier_parts(group)) for terms in per_line]
    code = literal_lines(text)
    return [raws[number] for number in asked_phrases(raws, per_line, found, group, asked, frozenset(), code)]


def test_a_phrase_that_takes_in_a_word_the_headings_hold_is_found_in_prose_only() -> None:
    """PostgreSQL's real VACUUM page: "VACUUM FULL" in the Description's prose is a phrase of
    "What lock does VACUUM FULL take?" though the window looks only for lock, full and take (the
    page is named VACUUM); the synopsis' `VACUUM [ FULL ]`, a fenced block, is not."""
    text = (FIXTURES / "pg_sql_vacuum.md").read_text(encoding="utf-8")
    asked = query_terms("What lock does VACUUM FULL take?")
    lines = _phrase_lines(text, ["lock", "full", "take"], asked)
    assert lines == ["parallel workers as zero. VACUUM FULL rewrites the entire contents of the table"]
    assert "VACUUM [ FULL ] [ FREEZE ] [ VERBOSE ] [ ANALYZE ] [ table_and_columns [, ...] ]" in text
    assert _phrase_lines(text, ["lock", "full", "take"], ["lock", "full", "take"]) == []  # nothing else asked


def test_an_inline_code_span_holds_no_phrase() -> None:
    """The json manual's real `Using :mod:`json.tool` from the shell`: json and tool side by side
    inside a code span are a module's name, not the query's words as asked."""
    whole = (FIXTURES / "python_json.rst.txt").read_text(encoding="utf-8")
    at = whole.index("Using :mod:`json.tool` from the shell to validate and pretty-print:")
    text = whole[at : whole.index("\n\n", at)]
    assert _phrase_lines(text, ["tool", "shell"], query_terms("json tool shell")) == []
    plain = text.replace(":mod:`json.tool`", "json tool")
    assert _phrase_lines(plain, ["tool", "shell"], query_terms("json tool shell")) == [
        "Using json tool from the shell to validate and pretty-print:"
    ]


def test_code_and_output_lines_of_a_real_manual() -> None:
    """The json manual's doctest transcripts after `::` and its fenced-free prose: the transcript
    lines (prompts and output) are literal, the prose and directives around them are not."""
    raws = (FIXTURES / "python_json.rst.txt").read_text(encoding="utf-8").split("\n")
    literal = literal_lines("\n".join(raws))
    assert raws[31] == "    >>> json.dumps(['foo', {'bar': ('baz', None, 1.0, 2)}])" and 31 in literal
    assert raws[32].startswith('    \'["foo"') and 32 in literal  # the output
    prose = [n for n, raw in enumerate(raws) if raw.startswith(":mod:`json` exposes an API")]
    assert prose and prose[0] not in literal
    assert not any(raw.startswith(".. function::") for n, raw in enumerate(raws) if n in literal)


def test_fences_directives_and_notes() -> None:
    """A fence's lines, a code directive's body (past its options) are literal; a note's body is prose."""
    raws = [
        "```js", "a = 1", "```", "", ".. code-block:: python", "   :linenos:", "", "   b = 2", "",
        "prose", "", ".. note::", "", "   A note is prose.", "", "Example::", "", "   c = 3", "back",
    ]  # fmt: skip
    assert sorted(literal_lines("\n".join(raws))) == [0, 1, 2, 7, 17]


def test_the_lines_under_another_section_than_the_trails() -> None:
    """The real tail of `finally clause` then `The with statement`: the lines from the with
    statement's title on are away from a trail holding try and finally; a text that starts with its
    own heading (PostgreSQL's `## VACUUM` page, its `## Description` below) has none away."""
    raws = (FIXTURES / "python_finally_with.rst.txt").read_text(encoding="utf-8").split("\n")
    asked = query_terms("What happens if both the try block and the finally block return a value?")
    trail = ("The :keyword:`!try` statement", ":keyword:`!finally` clause")
    title = raws.index("The :keyword:`!with` statement")
    text = "\n".join(raws)
    assert (title, "The :keyword:`!with` statement") in inner_headings(text)
    away = away_lines(text, ["both", "block", "return", "value"], asked, trail)
    assert away == frozenset(range(title, len(raws)))
    assert away_lines(text, asked, asked, trail) == frozenset()  # every word looked for
    vacuum = (FIXTURES / "pg_sql_vacuum.md").read_text(encoding="utf-8")
    assert [title for _, title in inner_headings(vacuum)] == ["VACUUM", "Synopsis", "Description"]
    lock = query_terms("What lock does VACUUM FULL take?")
    assert away_lines(vacuum, ["lock", "full", "take"], lock, ("VACUUM",)) == frozenset()
    cut = vacuum[vacuum.index("\n\n") + 2 :]  # from the line after the title on
    assert away_lines(cut, ["lock", "full", "take"], lock, ("VACUUM",)) == frozenset(range(2, cut.count("\n") + 1))


def test_the_entry_a_line_lies_in() -> None:
    """An API directive or a heading starts the entry a line lies in: the isclose entry of math.rst,
    a `###` section of Node's timers.md; a line above every one lies in none (0)."""
    text = (FIXTURES / "python_math_isclose.rst.txt").read_text(encoding="utf-8")
    raws, starts = text.split("\n"), entry_starts(text)
    isclose = next(n for n, raw in enumerate(raws) if raw.startswith(".. function:: isclose("))
    assert entry_start(starts, isclose + 8) == isclose and entry_start(starts, isclose) == isclose
    assert entry_start(starts, 2) == 0 and raws[entry_start(starts, isclose - 3)].startswith(".. function:: gcd(")
    node = (FIXTURES / "node_timers.md").read_text(encoding="utf-8")
    heading = node.split("\n").index("### `immediate.unref()`")
    assert entry_start(entry_starts(node), heading + 4) == heading
