"""What the model reads: compact results that say what did not fit and what to call next."""

from __future__ import annotations

from dataclasses import replace

from ctxtrio.docs.arguments import first_line
from ctxtrio.docs.model import (
    DocSummary,
    DocumentInfo,
    IngestResult,
    Outline,
    OutlineEntry,
    SearchHit,
    SearchResult,
    Window,
    WindowChunk,
)
from ctxtrio.docs.render import (
    hit_header,
    render_ingest,
    render_list,
    render_outline,
    render_search,
    render_summary,
    render_window,
    shown_title,
    trail_text,
)

INFO = DocumentInfo("d1", "Guide", "inline", 5, 9000, 2500, 0.0)


def test_outline_groups_runs_of_one_trail() -> None:
    """Consecutive chunks under the same headings share one line with their summed tokens."""
    entries = (
        OutlineEntry(0, ("Guide",), 100),
        OutlineEntry(1, ("Guide", "Install"), 300),
        OutlineEntry(2, ("Guide", "Install"), 200),
        OutlineEntry(3, (), 50),
    )
    text = render_outline(Outline(INFO, entries, 0))
    assert text.splitlines()[1:] == [
        "#0 [100] Guide",
        "#1-2 [500] Guide > Install",
        "#3 [50] (no heading)",
        "... 1 more chunk: call again with from=4.",  # one of a thing is singular
    ]


def test_window_says_where_to_continue_and_what_was_cut() -> None:
    """A window names the next chunk, and a cut chunk says how to read it whole."""
    window = Window(INFO, None, (WindowChunk(2, ("Guide",), "partial", 3, cut=True),), 3, 50)
    text = render_window(window)
    assert text.startswith('d1 "Guide" chunk #2 of 5. Next: #3 (call doc_window again).')
    assert "#2 was cut: from=2 with more budget_tokens reads it whole." in text
    assert text.endswith("[#2 · Guide]\npartial")


def test_one_chunk_is_said_as_one() -> None:
    """A window or summary of one chunk says "chunk #2", not "chunks #2-2" (read as two, or a typo)."""
    two = (WindowChunk(1, (), "a", 1), WindowChunk(2, (), "b", 1))
    assert render_window(Window(INFO, None, two, 3, 50)).startswith('d1 "Guide" chunks #1-2 of 5.')
    assert render_summary(DocSummary(INFO, 2, 2, "s", "extractive")).startswith('Summary of d1 "Guide", chunk #2 (')
    assert render_summary(DocSummary(INFO, 1, 2, "s", "extractive")).startswith('Summary of d1 "Guide", chunks #1-2 (')


def test_one_token_is_said_as_one() -> None:
    """A window of a one-token chunk and a one-token document say "1 token" (they said "1 tokens"); more
    stay plural, their digits as the search head's."""
    one = replace(INFO, chunks=1, tokens=1)
    window = Window(one, None, (WindowChunk(0, (), "a", 1),), 1, 60, estimated=True)
    assert render_window(window).startswith('d1 "Guide" chunk #0 of 1 (1 token, estimated). End of document')
    assert render_ingest(IngestResult(one, False, 0.0)).startswith('Ingested d1 "Guide": 1 chunk, 1 token, 9000 chars.')
    assert render_list([one]).endswith('- d1 "Guide": 1 chunk, 1 token, inline')
    assert render_outline(Outline(one, (OutlineEntry(0, (), 1),), 0)).startswith('d1 "Guide": 1 chunk, 1 token. #index')
    wide = Window(INFO, None, (WindowChunk(0, (), "a", 1949),), 1, 4000, estimated=True)
    assert "(1949 tokens, estimated)" in render_window(wide)
    assert render_ingest(IngestResult(INFO, False, 0.0)).startswith(
        'Ingested d1 "Guide": 5 chunks, 2500 tokens, 9000 chars.'
    )


def test_window_past_the_end_says_how_to_start_over() -> None:
    """Reading past the last chunk is not an error: it says so and how to start over."""
    text = render_window(Window(INFO, "s", (), 7, 4000))
    assert "past the end" in text and "reset=true" in text


def test_search_reports_what_did_not_fit() -> None:
    """The header counts hits left out by the budget and matches beyond the limit."""
    hit = SearchHit("d1", "Guide", 4, ("Guide", "FAQ"), 3.14159, "answer text", 3)
    result = SearchResult("faq", (hit,), 2, True, 500, 40)
    text = render_search(result)
    assert text.startswith("1 of 3+ hits fit (40 tokens).")  # 2 left out by the budget, more beyond the limit
    estimated = render_search(replace(result, estimated=True))  # checked by an estimate, not the tokenizer
    assert estimated.startswith("1 of 3+ hits fit (40 tokens, estimated).")
    assert '[d1 "Guide" #4]\nanswer text' in text
    nothing = render_search(SearchResult("faq", (), 0, False, 500, 0))
    assert nothing.startswith("No chunk matches 'faq'")


def test_a_title_the_text_shown_opens_with_is_not_repeated() -> None:
    """A hit whose text opens with its title (an inline text's first line, a markdown heading) shows no
    title; a passage from further in, or a file's name, keeps it."""
    subject = "store/vectors.py split (414 lines, past the house's ~400): the SQL that keeps th"
    assert shown_title(subject, subject + "e file in step and bounded, ...") == ""
    assert shown_title("Release notes", "\n# Release  notes\n\nVersion 2 ...") == ""
    assert shown_title(subject, "[...] moves to store/vector_upkeep.py [...]") == subject
    assert shown_title("os.rst.txt", ":mod:`os` --- Miscellaneous operating system interfaces") == "os.rst.txt"
    assert shown_title("", "anything") == ""


def test_a_title_made_harmless_still_matches_the_line_it_was_made_of() -> None:
    """An inline text's title is its first line made harmless (ESC as '\\x1b'): a hit opening with that line
    showed the title again in its header, beside the line, once titles were made harmless."""
    line = "Widgets \x1b[2Jand\u202e gadgets"
    assert shown_title(first_line(line + "\n\nbody"), f"# {line}\n\nbody") == ""


def test_long_trails_keep_their_end() -> None:
    """A very long heading trail is shortened from the front, keeping the most specific headings."""
    trail = tuple(f"Heading number {n}" for n in range(20))
    text = trail_text(trail)
    assert len(text) == 160 and text.startswith("...") and text.endswith("Heading number 19")


def test_hit_headers_are_short() -> None:
    """A hit's header says where it is, no more: the document (its title only where the id does not
    name it), the chunk and the lines shown; the trail and the score stay in the structured result."""
    header = hit_header("library.os", "os.rst.txt", 58, (26, 48, 53))
    assert header == "[library.os #58 lines 26-48]"
    assert hit_header("build-log", "build-failure.log", 3) == '[build-log "build-failure.log" #3]'
    hit = SearchHit(
        "library.os", "os.rst.txt", 58, ("os", "function makedirs"), 4.0, "text", 1, cut=True, lines=(2, 3, 9)
    )
    text = render_search(SearchResult("makedirs", (hit,), 0, False, 1000, 20))
    assert (
        text == "The only hit fits (20 tokens). Whole: doc_window [doc_id #from].\n\n[library.os #58 lines 2-3]\ntext"
    )
