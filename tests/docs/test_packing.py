"""Packing chunks into budgets: overlap skipped in windows, at least one chunk, hits shown as passages when too big."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.model import DocumentInfo, Outline, OutlineEntry
from ctxtrio.docs.packing import (
    CUT_MARK,
    Candidate,
    contiguous_text,
    cut_around,
    cut_to_fit,
    fresh_text,
    pack_hits,
    pack_outline,
    pack_window,
)
from ctxtrio.docs.render import render_outline
from ctxtrio.text.cutting import whole_words
from ctxtrio.text.query import query_terms
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.cold()
SOURCE = "".join(f"Line {n} of the source text.\n" for n in range(40))


def chunks_of(source: str, size: int, overlap: int) -> list[StoredChunk]:
    out: list[StoredChunk] = []
    start = 0
    while True:
        end = min(len(source), start + size)
        text = source[start:end]
        out.append(StoredChunk(len(out), text, start, end, ("Doc", f"Part {len(out)}"), MODEL.estimate(text)))
        if end == len(source):
            return out
        start = end - overlap


def test_fresh_text_skips_the_overlap_of_the_predecessor() -> None:
    """Consecutive chunks joined by fresh_text give the source exactly once."""
    chunks = chunks_of(SOURCE, 200, 50)
    assert contiguous_text(chunks) == SOURCE
    assert fresh_text(None, chunks[1]) == chunks[1].text
    assert fresh_text(chunks[0], chunks[2]) == chunks[2].text  # not the predecessor


def test_cut_to_fit_returns_a_prefix_within_budget() -> None:
    """The cut is a prefix, within the budget, ending at a line break when one is near."""
    cut = cut_to_fit(SOURCE, 80, MODEL)
    assert SOURCE.startswith(cut) and MODEL.estimate(cut) <= 80
    assert SOURCE[len(cut)] == "\n"
    assert cut_to_fit("short", 40, MODEL) == "short"


def test_window_packs_in_order_until_the_budget() -> None:
    """A window stops before the first chunk that does not fit, and never skips one."""
    chunks = chunks_of(SOURCE, 200, 50)
    window = pack_window(chunks, 1, len(chunks) - 1, 220, MODEL)
    assert [chunk.index for chunk in window] == list(range(1, 1 + len(window)))
    assert 1 <= len(window) < len(chunks) - 1
    assert not any(chunk.cut for chunk in window)
    assert window[1].text == chunks[2].text[50:]  # overlap with #1 not repeated


def test_window_cuts_a_single_chunk_larger_than_the_budget() -> None:
    """At least one chunk is returned: a chunk over the budget is cut and marked."""
    chunks = chunks_of(SOURCE, 1000, 50)
    window = pack_window(chunks, 0, 0, 60, MODEL)
    assert len(window) == 1 and window[0].cut
    assert chunks[0].text.startswith(window[0].text) and window[0].tokens <= 60


def test_window_respects_the_last_index() -> None:
    """``last`` bounds the window even when the budget has room."""
    chunks = chunks_of(SOURCE, 200, 50)
    assert [chunk.index for chunk in pack_window(chunks, 0, 1, 100_000, MODEL)] == [0, 1]


def test_a_big_hit_shows_a_passage_and_leaves_room_for_the_next() -> None:
    """A hit too big for its share shows a cut passage; a later small hit still fits whole."""
    big = StoredChunk(0, "word\n" * 400, 0, 2000, (), MODEL.estimate("word\n" * 400))
    small = StoredChunk(1, "tiny text", 0, 9, ("H",), MODEL.estimate("tiny text"))
    hits, omitted, used = pack_hits(
        [Candidate("d", "T", big, 9.0), Candidate("d", "T", small, 1.0)], 200, MODEL, ["word"]
    )
    assert [hit.index for hit in hits] == [0, 1] and omitted == 0 and 0 < used <= 200
    assert hits[0].cut and hits[0].text.endswith(CUT_MARK) and not hits[1].cut and hits[1].text == "tiny text"


def test_hits_cut_the_best_when_nothing_fits() -> None:
    """When no hit fits at all, the best one is cut to the budget and marked."""
    big = StoredChunk(3, "word " * 400, 0, 2000, (), MODEL.estimate("word " * 400))
    hits, omitted, _ = pack_hits([Candidate("d", "T", big, 2.0), Candidate("d", "T", big, 1.0)], 60, MODEL)
    assert len(hits) == 1 and hits[0].cut and hits[0].score == 2.0 and omitted == 1


def _log(lines: int, needle_at: int) -> str:
    """A build log of about 50 KB with one distinctive failure line."""
    out = [
        f"2026-12-0{n % 9 + 1} 10:{n % 60:02d}:{n * 7 % 60:02d} INFO [worker-{n % 4}] step {n} compiled module_{n}.o in {n * 13 % 997} ms"
        for n in range(lines)
    ]
    out[needle_at] = "2026-12-05 10:41:17 ERROR [linker] undefined reference to `frobnicate_widget' in module_77.o"
    return "\n".join(out) + "\n"


def test_a_cut_search_hit_keeps_the_matched_line_and_marks_the_cuts() -> None:
    """At budgets 100, 300 and 600 a 50 KB chunk cut to fit holds the matched line, lines on both sides, marked where cut."""
    text = _log(680, 400)
    assert len(text) > 50_000
    chunk = StoredChunk(0, text, 0, len(text), ("build.log",), MODEL.estimate(text))
    needle = "undefined reference to `frobnicate_widget' in module_77.o"
    for budget in (100, 300, 600):
        hits, omitted, used = pack_hits(
            [Candidate("d1", "build log", chunk, 3.0)], budget, MODEL, ["frobnicate", "widget"]
        )
        assert len(hits) == 1 and hits[0].cut and omitted == 0
        shown = hits[0].text
        assert needle in shown, budget
        assert shown.startswith(CUT_MARK) and shown.endswith(CUT_MARK)
        assert used <= budget
        before, after = shown.split(needle)
        lines_before, lines_after = before.count("\n"), after.count("\n")
        assert lines_before <= lines_after <= 2 * lines_before + 2  # two lines after for each one before
        assert MODEL.estimate(shown) <= budget


def test_cut_around_centres_on_the_term_inside_an_overlong_line() -> None:
    """A single line longer than the budget is cut by characters around the term."""
    line = "x" * 3000 + " needle " + "y" * 3000
    shown = cut_around(line, ["needle"], 40, MODEL)
    assert "needle" in shown and shown.startswith(CUT_MARK) and shown.endswith(CUT_MARK)
    assert MODEL.estimate(shown) <= 40


def test_whole_words_drops_the_parts_of_words_a_character_cut_left_at_its_ends() -> None:
    """'[...] : Tim [...]' (of ':exc: Timeout') says nothing: a cut's part-words go, and with no word left, all."""
    whole = "   :exc:`TimeoutExpired` is raised after timeout seconds."
    assert whole_words(whole, f"{CUT_MARK} exc:`TimeoutExp {CUT_MARK}") == ""
    assert whole_words(whole, f"{CUT_MARK} `TimeoutExpired` is raised aft {CUT_MARK}") == (
        f"{CUT_MARK} `TimeoutExpired` is raised {CUT_MARK}"
    )
    assert whole_words(whole, f":exc:`TimeoutExpired` is {CUT_MARK}") == f":exc:`TimeoutExpired` is {CUT_MARK}"


def test_whole_words_marks_only_the_ends_it_cut() -> None:
    """A text shown to its end, or whole, gains no cut mark there: 'widget section. [...]' read as cut."""
    whole = "Set the retry timeout in seconds with the timeout key of the widget section."
    assert whole_words(whole, whole) == whole
    assert whole_words(whole, f"{CUT_MARK} t in seconds with the timeout key of the widget section.") == (
        f"{CUT_MARK} in seconds with the timeout key of the widget section."
    )
    assert (
        whole_words(whole, f"{CUT_MARK} retry timeout in sec {CUT_MARK}") == f"{CUT_MARK} retry timeout in {CUT_MARK}"
    )


def test_whole_words_looks_past_a_first_occurrence_inside_a_longer_word() -> None:
    """Characters shown that occur first inside a longer word ('readtimeout') and later on a word's edge are
    judged where they are whole words: 'timeout key' lost its 'timeout', and 'timeout' alone
    was dropped as a part-word (str.find saw the first occurrence only)."""
    whole = "The readtimeout key is old. Use the timeout key of the widget."
    assert whole_words(whole, f"{CUT_MARK} timeout key {CUT_MARK}") == f"{CUT_MARK} timeout key {CUT_MARK}"
    assert whole_words(whole, f"{CUT_MARK} timeout {CUT_MARK}") == f"{CUT_MARK} timeout {CUT_MARK}"
    assert whole_words(whole, f"{CUT_MARK} eadtimeout k {CUT_MARK}") == ""  # occurs once, inside words: as before


def test_a_hit_cut_by_characters_is_not_dropped_for_an_earlier_look_alike() -> None:
    """A config line's 'timeout=30' cut around by characters at budget 37-39 showed nothing (the hit dropped):
    its characters 'pt299=1; timeout=30' occur first in the line above, inside 'timeout=300'."""
    options = "; ".join(f"opt{n}=1" for n in range(300)) + "; timeout=30; retries=5; "
    text = "Old names: opt299=1; timeout=300; retry=5.\n" + options + "; ".join(f"opt{n}=1" for n in range(300, 600))
    chunk = StoredChunk(0, text, 0, len(text), (), MODEL.estimate(text))
    for budget in (37, 38, 39):
        hits, _, _ = pack_hits([Candidate("conf", "c", chunk, 1.0)], budget, MODEL, ["timeout", "retries"])
        assert [hit.text for hit in hits] == [f"{CUT_MARK} timeout=30 {CUT_MARK}"], budget


def test_cut_around_without_a_match_is_the_prefix_cut() -> None:
    """No term found: the same prefix cut as before."""
    assert cut_around(SOURCE, ["absent"], 40, MODEL) == cut_to_fit(SOURCE, 40, MODEL)


def test_outline_keeps_the_first_entries_that_fit_and_points_to_the_rest() -> None:
    """A long outline is cut to its first entries within the budget; the rest is one 'call again' line."""
    info = DocumentInfo("d1", "Guide", "inline", 300, 90000, 30000, 0.0)
    entries = tuple(
        OutlineEntry(n, ("Guide", f"Part {n}"), 100, f"Part {n} explains step {n} in detail.") for n in range(300)
    )
    outline = Outline(info, entries, 0)
    packed = pack_outline(outline, 200, MODEL)
    assert 1 < len(packed.entries) < 300 and packed.entries == entries[: len(packed.entries)]
    assert MODEL.estimate(render_outline(packed)) <= 200
    longer = Outline(info, entries[: len(packed.entries) + 1], 0)
    assert MODEL.estimate(render_outline(longer)) > 200
    assert f"call again with from={len(packed.entries)}" in render_outline(packed)
    assert pack_outline(outline, 10**6, MODEL) is outline
    assert len(pack_outline(outline, 1, MODEL).entries) == 1


def test_a_passage_repeating_the_lines_of_a_hit_above_gives_its_room_to_the_next() -> None:
    """Overlapping chunks of the real json.rst: the passage of the second, about `separators`,
    would repeat lines the first already shows; it is left out, not counted as omitted (a
    larger budget would not show it), and the third hit is shown in its place, within the budget."""
    text = (Path(__file__).parents[1] / "text" / "fixtures" / "python_json.rst.txt").read_text(encoding="utf-8")
    chunks = chunks_of(text, 2400, 1200)
    assert all("separators" in chunks[n].text for n in (4, 5)) and chunks[5].start < chunks[4].end
    candidates = [Candidate("json", "json.rst", chunks[n], score) for n, score in ((4, 2.0), (5, 1.5), (0, 1.0))]
    for budget in (300, 400, 500):
        hits, omitted, used = pack_hits(candidates, budget, MODEL, query_terms("separators"))
        assert [hit.index for hit in hits] == [4, 0] and omitted == 0 and used <= budget, budget


def test_a_hit_found_by_its_heading_shows_the_definition_of_the_word_it_holds() -> None:
    """Python's real `-W` entry as one hit under the heading `cmdoption -W`: its window looks for the
    words the headings lack, far below the entry's start, and still shows `.. cmdoption:: -W arg`
    and "Warning control." above it, within the budget."""
    text = (Path(__file__).parents[1] / "text" / "fixtures" / "python_cmdline_W.rst.txt").read_text(encoding="utf-8")
    chunk = StoredChunk(11, text, 0, len(text), ("Miscellaneous options", "cmdoption -W"), MODEL.estimate(text))
    rarity = {"python": 0.04, "w": 1.0, "option": 0.5}
    for budget in (400, 500):
        hits, omitted, used = pack_hits(
            [Candidate("using.cmdline", "cmdline.rst.txt", chunk, 3.0)],
            budget,
            MODEL,
            query_terms("python -W option"),
            rarity,
        )
        assert len(hits) == 1 and omitted == 0 and used <= budget and hits[0].cut, budget
        assert ".. cmdoption:: -W arg\n\n   Warning control." in hits[0].text, budget


def test_a_hit_running_past_its_section_shows_its_own_section() -> None:
    """Python's real tail of `finally clause` and start of `The with statement` as one hit under the
    trail `The try statement > finally clause`: pack_hits hands the trail to the window, which
    shows what a return in finally does, not the with statement below, within the budget."""
    path = Path(__file__).parents[1] / "text" / "fixtures" / "python_finally_with.rst.txt"
    text = path.read_text(encoding="utf-8")
    trail = ("The :keyword:`!try` statement", ":keyword:`!finally` clause")
    chunk = StoredChunk(10, text, 0, len(text), trail, MODEL.estimate(text))
    rarity = {"both": 0.41, "try": 0.62, "block": 0.43, "finally": 1.0, "return": 0.08, "value": 0.08}
    question = query_terms("What happens if both the try block and the finally block return a value?")
    for budget in (250, 350):
        candidates = [Candidate("reference.compound_stmts", "compound_stmts.rst.txt", chunk, 3.0)]
        hits, omitted, used = pack_hits(candidates, budget, MODEL, question, rarity)
        assert len(hits) == 1 and omitted == 0 and used <= budget and hits[0].cut, budget
        assert "clause will\nalways be the last one executed" in hits[0].text, budget


def test_a_first_hit_scoring_clearly_above_the_second_takes_a_larger_share() -> None:
    """The first of two large hits shows more lines when its BM25 score leads the second's clearly
    (the answer is then mostly in it), as much as an even share when the two are close, and when
    the second was found or placed by meaning (a similarity, or a place BM25 did not give)."""

    def big(name: str) -> StoredChunk:
        text = "".join(f"Line {n} of {name} says something about the word here.\n" for n in range(200))
        return StoredChunk(0, text, 0, len(text), (), MODEL.estimate(text))

    def first_tokens(second: float, *, by_meaning: bool = False, placed: bool = False) -> int:
        later = Candidate("b", "B", big("b"), second, by_meaning=by_meaning, placed=placed)
        candidates = [Candidate("a", "A", big("a"), 10.0), later]
        hits, _, used = pack_hits(candidates, 1000, MODEL, ["word"])
        assert len(hits) == 2 and used <= 1000
        return hits[0].tokens

    even = first_tokens(9.0)
    assert first_tokens(7.0) > even + 40
    assert first_tokens(7.0, by_meaning=True) == first_tokens(7.0, placed=True) == even == first_tokens(8.0)
