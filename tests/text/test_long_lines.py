"""A note written as one long line: its passage is the window of sentences densest in the query's words."""

from __future__ import annotations

from ctxtrio.text.cutting import CUT_MARK, cut_around
from ctxtrio.text.long_lines import cut_by_sentences, sentence_lines
from ctxtrio.text.passages import cut_to_passage
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.flat()
#: Sentences that hold one word of the query each, then the one that answers it, on one line.
NOTE = (
    "store writer: the journal now syncs each group round on its own thread. "
    + " ".join(f"Step {n} of the folder sweep reads nothing new from the disk here." for n in range(12))
    + " A new document's round is four fsyncs: the file, its folder, docs/ and the catalog. "
    + " ".join(f"Row {n} of the table keeps the same figures as before the change." for n in range(12))
)


def test_sentence_lines_breaks_a_long_line_at_its_sentences_and_keeps_every_offset() -> None:
    """The space after each sentence end becomes a line break; nothing moves, and no break after
    an abbreviation, an initial, or a full stop followed by a lowercase word."""
    text = "Short line. Two.\nThe cache (e.g. the index) grows. J. Smith said so. It stops at 2.5 MB. x. y\nend"
    broken = sentence_lines(text)
    assert len(broken) == len(text)
    assert broken.split("\n") == [
        "Short line.",
        "Two.",
        "The cache (e.g. the index) grows.",
        "J. Smith said so.",
        "It stops at 2.5 MB. x. y",
        "end",
    ]
    assert all(a == b or (a == " " and b == "\n") for a, b in zip(text, broken, strict=True))


def test_a_long_one_line_note_is_cut_to_the_sentence_that_answers() -> None:
    """The query's words stand alone in early sentences and together in a later one: the cut shows
    that sentence, as written (no line breaks added), with cut marks. Characters cut around the
    line's first match (cut_to_passage: one line too long for the budget) show the first sentence."""
    terms = query_terms("How many fsyncs does a new document's round take?")
    shown = cut_by_sentences(NOTE, terms, 60, MODEL)
    assert "A new document's round is four fsyncs: the file, its folder, docs/ and the catalog." in shown
    assert shown.startswith(CUT_MARK + " ") and shown.endswith(" " + CUT_MARK) and "\n" not in shown
    assert MODEL.estimate(shown) <= 60
    assert shown.replace(CUT_MARK, "").strip() in NOTE
    old = cut_to_passage(NOTE, terms, 60, MODEL)
    assert "four fsyncs" not in old  # what this rule replaces


def test_a_long_chinese_line_is_cut_to_the_sentence_that_answers() -> None:
    """Chinese puts no space after 。, so the mark itself is the break (in the copy the window is
    chosen over; the text shown is as written, its last mark before the cut left out). A first,
    passing mention (数据库在维护) drew the characters cut around the match to it."""
    filler = "今天的天气很好，我们去公园散步。" * 40
    text = filler + "数据库在维护。" + filler + "数据库的备份每天凌晨三点自动运行。" + filler
    broken = sentence_lines(text)
    assert len(broken) == len(text) and broken.count("\n") == text.count("。") - 1
    terms = query_terms("数据库备份")
    shown = cut_by_sentences(text, terms, 60, MODEL)
    assert "数据库的备份每天凌晨三点自动运行" in shown and "维护" not in shown
    assert MODEL.estimate(shown) <= 60 and "\n" not in shown
    assert "数据库的备份" not in cut_to_passage(text, terms, 60, MODEL)  # what it showed before


def test_a_sentence_holding_the_most_words_too_long_to_fit_is_cut_around_not_skipped() -> None:
    """The one sentence holding every word of the query is longer than the budget: the cut is the
    characters around it (cut_around), not a window of short sentences holding one word."""
    long_sentence = "The thesaurus gained 122 more groups, " + ", ".join(f"phrase {n}" for n in range(80)) + "."
    text = long_sentence + " " + " ".join(f"Row {n} of the groups table is unchanged." for n in range(10))
    terms = query_terms("How many thesaurus groups were added?")
    shown = cut_by_sentences(text, terms, 40, MODEL)
    assert "thesaurus gained 122 more groups" in shown
    assert shown == cut_around(text, terms, 40, MODEL)


def test_a_note_that_fits_or_has_no_long_sentences_is_as_before() -> None:
    """Whole when it fits; wrapped lines without sentence ends inside give cut_to_passage's cut."""
    terms = query_terms("catalog round")
    assert cut_by_sentences(NOTE, terms, 10_000, MODEL) == NOTE
    wrapped = "\n".join(f"line {n} of the catalog round" if n == 30 else f"line {n} filler words" for n in range(60))
    assert cut_by_sentences(wrapped, terms, 30, MODEL) == cut_to_passage(wrapped, terms, 30, MODEL)
