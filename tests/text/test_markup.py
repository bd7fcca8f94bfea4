"""Tests for ctxtrio.text.markup: reST, AsciiDoc and plain-paragraph blocks."""

from __future__ import annotations

import random
import re
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ctxtrio.text import asciidoc, markup
from ctxtrio.text.asciidoc import asciidoc_blocks
from ctxtrio.text.markup import plain_blocks, rst_blocks
from ctxtrio.text.parts import trailed

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ctxtrio.text.blocks import Block

FIXTURES = Path(__file__).parent / "fixtures"


def headings(blocks: Iterator[Block]) -> list[tuple[int, str]]:
    return [(block.level, block.title) for block in blocks if block.level]


@pytest.mark.parametrize("split", [rst_blocks, asciidoc_blocks, plain_blocks])
def test_blocks_tile_random_text(split: Callable[[str], Iterator[Block]]) -> None:
    """Blocks are contiguous, non-empty and cover the whole text, for any input."""
    rng = random.Random(5)
    parts = ["Title\n", "=====\n", "-----\n", "\n", "  \n", "== Sec\n", "----\n", "text\n", "x", "\r\n",
             "~~~\n", "   indented\n", "数据\n", "****\n"]  # fmt: skip
    for _ in range(500):
        text = "".join(rng.choice(parts) for _ in range(rng.randrange(1, 30)))
        blocks = list(split(text))
        assert blocks[0].start == 0 and blocks[-1].end == len(text)
        assert all(b.start < b.end for b in blocks)
        assert all(a.end == b.start for a, b in zip(blocks, blocks[1:]))


def test_rst_levels_follow_first_appearance() -> None:
    """Styles get levels in the order they first appear; overlined differs from underlined."""
    text = ("=======\n Guide\n=======\n\nIntro.\n\nInstall\n-------\n\nStep.\n\nLinux\n~~~~~\n\n"
            "Usage\n-----\n\nRun.\n")  # fmt: skip
    assert headings(rst_blocks(text)) == [(1, "Guide"), (2, "Install"), (3, "Linux"), (2, "Usage")]


def test_rst_heading_block_holds_its_lines_and_blanks() -> None:
    """A title block is its title and adornment lines with the blank lines after them."""
    text = "Intro.\n\nInstall\n=======\n\n\nStep one.\n"
    blocks = [text[b.start : b.end] for b in rst_blocks(text)]
    assert blocks == ["Intro.\n\n", "Install\n=======\n\n\n", "Step one.\n"]


def test_rst_transitions_short_underlines_and_indents_are_not_titles() -> None:
    """A lone adornment line, a too-short underline and an indented line are no titles."""
    text = "Para.\n\n----------\n\nLong title here\n===\n\n   indented\n   --------\n\nA\n==\n"
    assert headings(rst_blocks(text)) == []


def test_rst_title_needs_a_break_before_it() -> None:
    """A line that continues a paragraph is not a title."""
    text = "first line\nsecond line\n===========\n\nTitle\n=====\n"
    assert headings(rst_blocks(text)) == [(1, "Title")]


def test_rst_api_entries_nest_by_indentation_and_close_at_unindented_text() -> None:
    """`.. class::` and an indented `.. method::` nest under the section; unindented text leaves them."""
    text = ("API\n===\n\n.. class:: Store(path)\n\n   A store.\n\n   .. method:: get(key)\n\n      Get it.\n\n"
            "Plain section text.\n\n.. function:: py:open(path)\n\n   Opens.\n")  # fmt: skip
    parts = [(text[start:end].split("\n")[0], trail) for start, end, trail, _ in trailed(rst_blocks(text))]
    assert parts == [
        ("API", ("API",)),
        (".. class:: Store(path)", ("API", "class Store")),
        ("   A store.", ("API", "class Store")),
        ("   .. method:: get(key)", ("API", "class Store", "method get")),
        ("      Get it.", ("API", "class Store", "method get")),
        ("Plain section text.", ("API",)),
        (".. function:: py:open(path)", ("API", "function py:open")),
        ("   Opens.", ("API", "function py:open")),
    ]


def test_asciidoc_titles_skip_delimited_blocks() -> None:
    """`=` titles set levels by their marks; lines inside ---- or .... blocks are not titles."""
    text = "= Guide\n\n== Install\n\n----\n== not a title\n----\n\n=== Linux\n\n....\n= nor this\n....\n"
    assert headings(asciidoc_blocks(text)) == [(1, "Guide"), (2, "Install"), (3, "Linux")]


def test_plain_text_is_paragraphs_only() -> None:
    """Plain text has no headings, even lines that look like markdown ones."""
    text = "# not a heading\nline\n\n\n2026-01-01 log line\n===\n"
    blocks = list(plain_blocks(text))
    assert [text[b.start : b.end] for b in blocks] == ["# not a heading\nline\n\n\n", "2026-01-01 log line\n===\n"]
    assert all(b.level == 0 for b in blocks)


@pytest.mark.parametrize("kind", ["rst", "asciidoc"])
def test_lines_after_line_feeds_are_those_of_line_starts(kind: str) -> None:
    """reST and AsciiDoc structural lines found after line feeds are those a MULTILINE ``^`` finds."""
    rng = random.Random(11)
    pieces = ["Title\n", "=====\n", "-----\n", "\n", "  .. function:: f(x)\n", ".. class:: A\n", "text ..\n",
              "== Section\n", "----\n", "....\n", "= T\n", " \t\n", "x", "\r\n", "~~~\n", "--flag::\n",
              "+\n", "[[id]]\n", "term:: text\n", "--\n", "```\n"]  # fmt: skip
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 25))) for _ in range(400)]
    texts += [path.read_text(encoding="utf-8") for path in sorted(FIXTURES.glob("*.rst*"))]
    lines: Callable[[str], Iterator[tuple[int, re.Match[str]]]] = asciidoc._lines
    line = asciidoc._LINE
    if kind == "rst":
        line, lines = markup._RST_LINE, partial(markup._lines, markup._RST)
    reference = re.compile("^" + line.replace("[ \\t]*+", "[ \\t]*"), re.MULTILINE)
    for text in texts:
        expected = [(found.start(), found.group(0).lstrip("\n")) for found in reference.finditer(text)]
        got = [(start, found.group(0).lstrip("\n")) for start, found in lines(text)]
        assert got == expected, text
