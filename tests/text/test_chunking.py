"""Tests for ctxtrio.text.chunking (and the block splitter it builds on)."""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxtrio.text.blocks import iter_blocks
from ctxtrio.text.chunking import Chunk, _continues_cluster, chunk_document, iter_chunks
from ctxtrio.text.tokens import ScriptClass, TokenModel

FIXTURES = Path(__file__).parent / "fixtures"
MODEL = TokenModel.flat()
FIXTURE_NAMES = ["manual.md", "app.log", "sample.py.txt", "korean.txt", "chinese.txt"]
SETTINGS = [(800, 80), (120, 30), (40, 10), (25, 0)]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def chunks(text: str, size: int, overlap: int = 0, model: TokenModel = MODEL) -> list[Chunk]:
    return chunk_document(text, chunk_tokens=size, overlap_tokens=overlap, model=model)


def assert_valid(text: str, found: list[Chunk], size: int, model: TokenModel = MODEL) -> None:
    """The invariants every chunking must satisfy."""
    assert [chunk.index for chunk in found] == list(range(len(found)))
    assert found[0].start == 0
    assert found[-1].end == len(text)
    for chunk in found:
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.start < chunk.end
        assert chunk.tokens == model.estimate(chunk.text) <= size
    for before, after in zip(found, found[1:]):
        assert before.start < after.start <= before.end < after.end  # ordered, no gap


@pytest.mark.parametrize("name", FIXTURE_NAMES)
@pytest.mark.parametrize(("size", "overlap"), SETTINGS)
def test_fixture_chunks_cover_source_in_order_within_budget(name: str, size: int, overlap: int) -> None:
    """Every fixture chunks into ordered, verbatim, gap-free chunks within the budget."""
    text = fixture(name)
    assert_valid(text, chunks(text, size, overlap), size)


def test_random_documents_hold_the_invariants() -> None:
    """Random markdown-ish documents keep coverage, order, verbatim text and budget."""
    rng = random.Random(1234)
    parts = [
        "# Title\n",
        "## Sub\n",
        "### Deep\n",
        "para text here. " * 3 + "\n",
        "\n",
        "\n\n",
        "- item\n",
        "1. first\n",
        "```\ncode\n",
        "```\n",
        "~~~\n",
        "Setext\n===\n",
        "x" * 300 + "\n",
        "数据库连接失败。\n",
        "회의에서 결정했다.\n",
        "e\u0301" * 40,
        "----\n",
        "| a | b |\n",
        "    indented\n",
        "\r\n",
        "word " * 120,
    ]
    for _ in range(150):
        text = "".join(rng.choice(parts) for _ in range(rng.randrange(1, 40)))
        size = rng.choice([5, 12, 30, 100])
        overlap = rng.randrange(0, size)
        assert_valid(text, chunks(text, size, overlap), size)


#: What long lines are made of: sentence ends, spaces, code separators, CJK, marks, emoji, CR and LF.
LONG_LINE_PARTS = ["word", " ", "  ", ". ", "e.g. ", "os.", "! ", "。", "，", ";", ",", ")", "}", "\u3000", "\t"]
LONG_LINE_PARTS += ["e\u0301", " \u0301", "\u00a0", "数据库", "xyz" * 30, "\U0001f44d\U0001f3fd", "\r", "\n"]


def _long_line(rng: random.Random) -> str:
    return "".join(rng.choice(LONG_LINE_PARTS) for _ in range(rng.randrange(1, 400)))


def test_random_long_lines_hold_the_invariants() -> None:
    """Lines cut at sentences, spaces, separators or characters keep every guarantee."""
    rng = random.Random(2121)
    for _ in range(300):
        text = _long_line(rng)
        size = rng.choice([3, 7, 20, 60])
        overlap = rng.randrange(0, size)
        found = chunks(text, size, overlap)
        assert_valid(text, found, size)
        assert not any(unicodedata.combining(c.text[0]) for c in found)


def test_pieces_that_count_more_together_still_make_chunks_within_budget() -> None:
    """Pieces meeting at a line break and an indent count more together than apart: with the cold model 2 of
    these 200 texts had a chunk 1 token over, whose pieces' sum fit; now every chunk is within the budget
    but one character (and its marks) whose own estimate is over it, and chunks keep their order."""
    cold = TokenModel.cold()
    rng = random.Random(2122)
    for _ in range(200):
        text = _long_line(rng)
        size = rng.choice([3, 7, 20, 60])
        found = chunks(text, size, rng.randrange(0, size), cold)
        assert found[0].start == 0 and found[-1].end == len(text)
        assert [chunk.index for chunk in found] == list(range(len(found)))
        for before, after in zip(found, found[1:]):
            assert before.start < after.start <= before.end < after.end
        for chunk in found:
            alone = all(_continues_cluster(char) for char in chunk.text[1:])
            assert chunk.tokens == cold.estimate(chunk.text) and (chunk.tokens <= size or alone), (text, size, chunk)


def test_a_long_line_is_never_cut_between_cr_and_lf() -> None:
    """A CRLF line too long for a chunk was cut after its CR (whitespace), leaving the LF to start the next piece."""
    rng = random.Random(2222)
    words = ["word", "the", "parser", "x" * 40, ". ", " ", "\r\n", ",", "数据"]
    for model in (MODEL, TokenModel.cold()):
        for _ in range(400):
            text = "".join(rng.choice(words) + " " * rng.randrange(2) for _ in range(rng.randrange(20, 300)))
            size = rng.choice([5, 10, 20, 40])
            found = chunks(text, size, model=model)
            edges = {edge for chunk in found for edge in (chunk.start, chunk.end)}
            assert not [edge for edge in edges if text[edge - 1 : edge + 1] == "\r\n"], (text, size)
            assert_valid(text, found, size, model)


def test_empty_text_has_no_chunks_and_blank_text_one() -> None:
    """ "" yields no chunks; whitespace-only text is one chunk."""
    assert chunks("", 100) == []
    [only] = chunks("  \n\n", 100)
    assert (only.start, only.end, only.trail) == (0, 4, ())


def test_invalid_budgets_rejected() -> None:
    """chunk_tokens below 1 or overlap outside [0, chunk_tokens) is a ValueError."""
    with pytest.raises(ValueError):
        chunks("text", 0)
    with pytest.raises(ValueError):
        chunks("text", 10, 10)
    with pytest.raises(ValueError):
        chunks("text", 10, -1)


def test_iter_chunks_yields_lazily() -> None:
    """iter_chunks is a generator: the first chunk arrives before the rest is chunked."""
    text = fixture("manual.md")
    stream = iter_chunks(text, chunk_tokens=200, overlap_tokens=20, model=MODEL)
    assert isinstance(stream, Iterator)
    first = next(stream)
    assert [first, *stream] == chunks(text, 200, 20)


def fenced_blocks(text: str) -> list[tuple[int, int]]:
    return [
        (block.start, block.end)
        for block in iter_blocks(text)
        if text[block.start : block.end].lstrip(" ").startswith(("```", "~~~"))
    ]


def test_fenced_blocks_never_split_when_they_fit() -> None:
    """A fenced code block that fits a chunk lies wholly inside one chunk."""
    text = fixture("manual.md")
    fences = fenced_blocks(text)
    assert len(fences) > 5
    for size in (60, 120, 400):
        found = chunks(text, size, size // 10)
        for start, end in fences:
            if MODEL.estimate(text[start:end]) <= size:
                assert any(c.start <= start and end <= c.end for c in found), (size, start)


def test_trails_across_skipped_levels() -> None:
    """`#` then `###` gives (A, C); a following `##` gives (A, B)."""
    text = "# A\n\nalpha\n\n### C\n\ngamma\n\n## B\n\nbeta\n"
    trails = {c.text.strip().splitlines()[-1]: c.trail for c in chunks(text, 3)}
    assert trails == {
        "# A": ("A",),
        "alpha": ("A",),
        "### C": ("A", "C"),
        "gamma": ("A", "C"),
        "## B": ("A", "B"),
        "beta": ("A", "B"),
    }


def test_setext_headings_and_thematic_breaks() -> None:
    """=== and --- under a text line are headings; --- after a blank line is not."""
    text = "Top\n===\n\nbody\n\nSub\n---\n\n---\n\nend\n"
    heads = [(b.level, b.title) for b in iter_blocks(text) if b.level]
    assert heads == [(1, "Top"), (2, "Sub")]
    assert chunks(text, 2)[-1].trail == ("Top", "Sub")


def test_overlap_carries_whole_blocks_and_trail_follows_new_block() -> None:
    """Trailing blocks within overlap are repeated; the trail is the first new block's."""
    text = "# A\n\n" + "".join(f"para {i} of a.\n\n" for i in range(3)) + "## B\n\nb0 text.\n\n"
    text += "".join(f"b{i} text goes on.\n\n" for i in range(1, 6))
    found = chunks(text, 12, 5)
    assert_valid(text, found, 12)
    carried = [c for prev, c in zip(found, found[1:]) if c.start < prev.end]
    assert carried  # some chunk starts with overlap
    for prev, chunk in zip(found, found[1:]):
        new_start = prev.end
        first_new = next(b for b in iter_blocks(text) if b.start == new_start)
        assert chunk.start <= first_new.start
        expected = ("A", "B") if new_start >= text.index("## B") else ("A",)
        assert chunk.trail == expected
        overlap = text[chunk.start : new_start]
        if overlap:
            assert MODEL.estimate(overlap) <= 5


def test_overlap_from_previous_section_keeps_new_trail() -> None:
    """A chunk whose overlap comes from section A but whose new text starts B has B's trail."""
    text = "# A\n\npara 0 of a.\n\npara 1 of a.\n\npara 2 of a.\n\n## B\n\nb0 text.\n\n"
    text += "b1 text goes on.\n\n"
    found = chunks(text, 12, 5)
    assert_valid(text, found, 12)
    mixed = [c for c in found if c.text.startswith("para 2") and "## B" in c.text]
    assert [c.trail for c in mixed] == [("A", "B")]


def test_new_chunk_starts_at_heading_when_half_full() -> None:
    """A heading starts a new chunk once the current one is at least half full."""
    section = "## S{}\n\n" + "filler words " * 8 + "\n\n"
    text = "".join(section.format(i) for i in range(6))
    found = chunks(text, 100)
    assert len(found) > 1
    assert all(c.text.startswith("## S") for c in found)


def test_trailing_heading_moves_to_next_chunk() -> None:
    """A heading that would end a full chunk moves to the next with its text."""
    text = "p " * 40 + "\n\n## Next\n\n" + "n " * 40 + "\n"
    found = chunks(text, 25)
    assert_valid(text, found, 25)
    assert not any(c.text.rstrip().endswith("## Next") for c in found)
    assert any(c.text.startswith("## Next") and c.trail == ("Next",) for c in found)


def test_large_block_split_on_lines() -> None:
    """A paragraph larger than a chunk splits on line boundaries."""
    text = fixture("app.log")
    found = chunks(text, 200, 0)
    assert_valid(text, found, 200)
    assert all(c.text.endswith("\n") for c in found)


def test_large_fence_split_on_lines() -> None:
    """A fenced block larger than a chunk is split, on line boundaries."""
    text = "```\n" + "".join(f"line {i} of code\n" for i in range(200)) + "```\n"
    found = chunks(text, 50)
    assert_valid(text, found, 50)
    assert len(found) > 5 and all(c.text.endswith("\n") for c in found)


def test_base64_line_hard_split_on_characters() -> None:
    """A single 100 KB base64 line is hard-split on characters within the budget."""
    rng = random.Random(9)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    line = "".join(rng.choice(alphabet) for _ in range(100_000))
    text = f"# Blob\n\n{line}\n\nafter\n"
    found = chunks(text, 800, 80)
    assert_valid(text, found, 800)
    assert len(found) >= 100_000 * 0.27 / 800
    assert sum(c.tokens for c in found) < MODEL.estimate(text) * 1.05  # pieces are nearly full


def test_char_split_keeps_combining_marks_with_base() -> None:
    """A character split never leaves a combining mark at the start of a chunk."""
    text = "e\u0301\u0302" * 500
    found = chunks(text, 7)
    assert_valid(text, found, 7)
    assert not any(unicodedata.combining(c.text[0]) for c in found)


def test_unsplittable_cluster_may_exceed_budget() -> None:
    """A single character whose own estimate exceeds the budget is a chunk of its own."""
    heavy = TokenModel({cls: 3.0 for cls in ScriptClass}, "heavy")
    text = "ab"
    found = chunks(text, 2, model=heavy)
    assert [(c.text, c.tokens) for c in found] == [("a", 3), ("b", 3)]


def test_cjk_text_chunks_by_paragraph() -> None:
    """Korean and Chinese fixtures chunk at paragraph ends when paragraphs fit."""
    for name in ("korean.txt", "chinese.txt"):
        text = fixture(name)
        found = chunks(text, 400)
        assert_valid(text, found, 400)
        assert all(c.text.endswith("\n") for c in found)
        assert len(found) > 1


def test_manual_trails_follow_headings() -> None:
    """In the manual, each chunk's trail is the heading stack above its first new block."""
    text = fixture("manual.md")
    headings = [b for b in iter_blocks(text) if b.level]
    found = chunks(text, 300, 30)
    for prev_end, chunk in zip([0] + [c.end for c in found], found):
        stack: list[tuple[int, str]] = []
        for head in headings:
            if head.start > prev_end:
                break
            stack = [entry for entry in stack if entry[0] < head.level] + [(head.level, head.title)]
        assert chunk.trail == tuple(title for _, title in stack)
    assert {"ctxtrio Operator Manual", "Install", "Security"} <= {c.trail[0] for c in found}
    assert any(len(c.trail) == 3 for c in found)  # "#### Notes" under "##"


OS_RST = Path("/usr/share/doc/python3.11/html/_sources/library/os.rst.txt")


def one_line_sources() -> list[str]:
    """Manual pages with their line breaks made spaces: an unwrapped paragraph, as HTML or PDF text gives."""
    texts = [fixture("python_json.rst.txt").replace("\n", " ")]
    if OS_RST.exists():  # the lead's case: Debian's python3.11-doc
        texts.append(OS_RST.read_text(encoding="utf-8").replace("\n", " ")[:20000])
    return texts


@pytest.mark.parametrize("text", one_line_sources(), ids=lambda text: text[:12])
@pytest.mark.parametrize(("size", "overlap"), [(800, 80), (120, 30)])
def test_one_line_prose_is_never_cut_inside_a_word(text: str, size: int, overlap: int) -> None:
    """A line longer than a chunk is cut between words ('All functions in t' | 'his module' was)."""
    model = TokenModel.cold()
    found = chunks(text, size, overlap, model=model)
    assert_valid(text, found, size, model=model)
    assert len(found) > 3
    inside = [
        (text[c.end - 12 : c.end], text[c.end : c.end + 12])
        for c in found[:-1]
        if text[c.end - 1 : c.end + 1].isalnum()
    ]
    assert inside == []
    # A sentence end is preferred: most pieces end after one (with its spaces).
    ends = [c.text.rstrip() for c in found[:-1]]
    assert sum(end[-1] in ".:)`" for end in ends) * 2 > len(ends)


def test_one_line_cjk_is_cut_after_a_full_stop() -> None:
    """Chinese without line breaks or spaces is cut after 。, not inside a sentence."""
    sentence = "这个模块提供了一种使用操作系统相关功能的便捷方式。如果你只是想读写文件，请参阅内置函数！"
    text = sentence * 60
    found = chunks(text, 100, 10)
    assert_valid(text, found, 100)
    assert len(found) > 3
    assert all(c.text[-1] in "。！" for c in found)


def test_minified_code_is_cut_after_a_separator() -> None:
    """A minified line without spaces is cut after ; , ) or }, not inside a name."""
    text = "".join(f"x.f{i}=(a,b)=>{{x.g{i}(a)+x.h{i}(b)}};" for i in range(400))
    found = chunks(text, 100, 0)
    assert_valid(text, found, 100)
    assert len(found) > 10
    assert all(c.text[-1] in ";,)}" for c in found[:-1])


def test_base64_line_still_cut_on_characters_within_budget() -> None:
    """With no boundary in the last half, a base64 line is cut where the budget ends, as before."""
    rng = random.Random(21)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    line = "".join(rng.choice(alphabet) for _ in range(20_000))
    found = chunks(line, 100, 0)
    assert_valid(line, found, 100)
    assert all(c.tokens >= 95 for c in found[:-1])  # full: not cut early at a boundary it lacks
