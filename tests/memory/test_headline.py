"""A cut entry's first sentence shown above its passage (memory/headline.py)."""

from __future__ import annotations

from ctxtrio.memory.headline import HEAD_SHARE, with_headline
from ctxtrio.text.long_lines import cut_by_sentences
from ctxtrio.text.terms import unique_terms

from .state.test_state import Journal
from .test_packing import MODEL, recall

_FILLER = [f"line {n}: routine status report number {n} for the week" for n in range(30)]
_SUBJECT = "fetch: RETRY_LIMIT is the most times a failed fetch is tried again"
_DETAIL = ["measured with RETRY_LIMIT 3 and RETRY_LIMIT 5 on the slow mirror:", "RETRY_LIMIT 5 kept every answer"]


def _note(subject: str) -> str:
    return "\n".join([subject, *_FILLER, *_DETAIL, *_FILLER])


def test_a_cut_entry_shows_its_first_sentence_above_its_passage() -> None:
    """A note says its point first and its detail further down, where the query's word is densest:
    the cut shows the passage there and, above it, the subject line that says what the name is
    (recall_bench: 'QUESTION_WORDS' answered by its entry's first line, cut away for a paragraph
    naming it)."""
    journal = Journal()
    entry = journal.entry(_note(_SUBJECT))
    result = recall(journal.state(), "RETRY_LIMIT slow mirror", 120)
    assert [e.id for e in result.entries] == [entry]
    shown = result.entries[0].text
    assert shown.startswith(_SUBJECT + "\n[...] ") and "\n".join(_DETAIL) in shown
    assert MODEL.estimate(result.text) <= result.used_tokens <= 120


def test_no_headline_without_a_query_word_or_room_for_it() -> None:
    """The first sentence is left out when it holds no word of the query, or would take more than a
    quarter of the room; a cut that starts where the entry does is left as it is."""
    terms = unique_terms("RETRY_LIMIT slow mirror")
    plain = _note("fetch: a failed fetch is tried again a few times")
    room = 80
    cut = cut_by_sentences(plain, terms, room, MODEL)
    assert cut.startswith("[...] ") and with_headline(plain, cut, terms, room, MODEL) == cut
    long_subject = _SUBJECT + " (" + ", ".join(f"the {n}th host" for n in range(12)) + ")"
    assert MODEL.estimate(long_subject) > room * HEAD_SHARE
    long = _note(long_subject)
    cut = cut_by_sentences(long, terms, room, MODEL)
    assert cut.startswith("[...] ") and with_headline(long, cut, terms, room, MODEL) == cut
    text = _note(_SUBJECT)
    assert with_headline(text, text, terms, room, MODEL) == text


def test_a_headline_sentence_inside_a_line_joins_as_written() -> None:
    """A note written on one line: its first sentence, then the passage cut from the rest after
    the space that followed it, within the room."""
    terms = unique_terms("RETRY_LIMIT slow mirror")
    filler = [f"Report {n} is routine, the same as the week before." for n in range(30)]
    detail = "Measured with RETRY_LIMIT 3 and RETRY_LIMIT 5 on the slow mirror: RETRY_LIMIT 5 kept every answer."
    text = " ".join([_SUBJECT + ".", *filler, detail, *filler])
    room = 90
    shown = with_headline(text, cut_by_sentences(text, terms, room, MODEL), terms, room, MODEL)
    assert shown.startswith(_SUBJECT + ". [...] ") and "RETRY_LIMIT 5 kept every answer" in shown
    assert MODEL.estimate(shown) <= room


def test_a_passage_from_the_top_keeps_the_first_sentence_and_cuts_the_rest_on_its_own() -> None:
    """When the query's words are densest in the subject line, the window starts at the top and
    its room went to the lines that follow it; now the first sentence stays and the room below goes
    to the rest's own best passage, the detail holding the query's words (recall_bench: "Why was
    starting the writer's thread with no loop turn reverted?" answered further down the note)."""
    subject = "fetch: RETRY_LIMIT on the slow mirror, how often a failed fetch is tried again"
    text = _note(subject)
    terms = unique_terms("RETRY_LIMIT slow mirror")
    room = 90
    cut = cut_by_sentences(text, terms, room, MODEL)
    assert cut.startswith(subject + "\n" + _FILLER[0])  # the window the whole text gives: the top
    shown = with_headline(text, cut, terms, room, MODEL)
    assert shown.startswith(subject + "\n[...] ") and _DETAIL[0] in shown
    assert _FILLER[0] not in shown and MODEL.estimate(shown) <= room
    journal = Journal()
    entry = journal.entry(text)
    result = recall(journal.state(), "RETRY_LIMIT slow mirror", 120)
    assert [e.id for e in result.entries] == [entry]
    assert result.entries[0].text.startswith(subject + "\n[...] ")
    assert _DETAIL[0] in result.entries[0].text
    assert MODEL.estimate(result.text) <= result.used_tokens <= 120
