"""The passage around the characters semantic recall matched: whole lines grown on both sides, or characters."""

from __future__ import annotations

from ctxtrio.text.focus import passage_around
from ctxtrio.text.passages import marked_text
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.cold()
LINES = "\n".join(f"Line {i} talks about subject {i} at some length here." for i in range(60))


def test_the_lines_of_the_span_are_kept_and_grown_on_both_sides() -> None:
    """The span's lines are inside, with lines before and after it, within the budget."""
    start = LINES.index("Line 30 ")
    end = LINES.index("Line 32 ")
    passage = passage_around(LINES, (start, end), 120, MODEL)
    assert passage is not None and passage.cut_before and passage.cut_after
    text = marked_text(LINES, passage)
    assert "Line 30 " in text and "Line 31 " in text and "Line 29 " in text and "Line 32 " in text
    assert MODEL.estimate(text) <= 120 and "Line 20 " not in text
    assert passage.first_line <= 31 <= passage.last_line


def test_a_span_inside_one_long_line_gives_its_characters() -> None:
    """An unwrapped paragraph longer than the budget: the characters from the span's start, ended at a word."""
    paragraph = " ".join(f"word{i}" for i in range(2000))
    start = paragraph.index("word1000 ")
    passage = passage_around(paragraph, (start, start + 300), 60, MODEL)
    assert passage is not None
    text = marked_text(paragraph, passage)
    assert passage.start == start and text.split()[1] == "word1000" and MODEL.estimate(text) <= 60
    assert paragraph[passage.end] == " "


def test_nothing_fits_or_an_empty_span_gives_none() -> None:
    """No room, or a span of no characters: None (the caller falls back to the keyword passage)."""
    assert passage_around(LINES, (10, 10), 500, MODEL) is None
    assert passage_around(LINES, (0, 40), 1, MODEL) is None
