"""Packing chunks into budgets: overlap skipped in windows, at least one chunk, hits skipped when too big."""

from __future__ import annotations

from ctxtrio.docs.chunks import StoredChunk
from ctxtrio.docs.packing import Candidate, contiguous_text, cut_to_fit, fresh_text, pack_hits, pack_window
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
    cut = cut_to_fit(SOURCE, 40, MODEL)
    assert SOURCE.startswith(cut) and MODEL.estimate(cut) <= 40
    assert SOURCE[len(cut)] == "\n"
    assert cut_to_fit("short", 40, MODEL) == "short"


def test_window_packs_in_order_until_the_budget() -> None:
    """A window stops before the first chunk that does not fit, and never skips one."""
    chunks = chunks_of(SOURCE, 200, 50)
    window = pack_window(chunks, 1, len(chunks) - 1, 150, MODEL)
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


def test_hits_skip_ones_that_do_not_fit_and_count_them() -> None:
    """A big hit that does not fit is skipped and counted; later smaller hits still fit."""
    big = StoredChunk(0, "word " * 400, 0, 2000, (), MODEL.estimate("word " * 400))
    small = StoredChunk(1, "tiny text", 0, 9, ("H",), MODEL.estimate("tiny text"))
    hits, omitted, used = pack_hits([Candidate("d", "T", big, 9.0), Candidate("d", "T", small, 1.0)], 100, MODEL)
    assert [hit.index for hit in hits] == [1] and omitted == 1 and 0 < used <= 100


def test_hits_cut_the_best_when_nothing_fits() -> None:
    """When no hit fits at all, the best one is cut to the budget and marked."""
    big = StoredChunk(3, "word " * 400, 0, 2000, (), MODEL.estimate("word " * 400))
    hits, omitted, _ = pack_hits([Candidate("d", "T", big, 2.0), Candidate("d", "T", big, 1.0)], 60, MODEL)
    assert len(hits) == 1 and hits[0].cut and hits[0].score == 2.0 and omitted == 1
