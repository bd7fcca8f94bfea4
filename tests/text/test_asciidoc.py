"""Tests for ctxtrio.text.asciidoc: titles, delimited blocks and labeled-list entries by AsciiDoc's rules.

The texts are laid out like git's manual pages (``Documentation/*.txt``), written here;
the real files are read in ``test_real_trails.py`` when Debian's git-doc is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.text.asciidoc import asciidoc_blocks
from ctxtrio.text.kinds import Kind, kind_for
from ctxtrio.text.parts import iter_parts

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ctxtrio.text.blocks import Block


def headings(blocks: Iterator[Block]) -> list[tuple[int, str]]:
    return [(block.level, block.title) for block in blocks if block.level]


def trail_of(text: str, needle: str) -> tuple[str, ...]:
    """The trail of the part that holds ``needle``."""
    at = text.index(needle)
    return next(trail for start, end, trail, _ in iter_parts(text, Kind.ASCIIDOC) if start <= at < end)


def test_two_line_titles_set_levels_by_underline() -> None:
    """Titles underlined by = - ~ ^ + are levels 1 to 5 (the user guide's two-line titles)."""
    text = (
        "git-demo(1)\n===========\n\nNAME\n----\ngit-demo - Show things\n\nOPTIONS\n-------\n"
        "Sub part\n~~~~~~~~\n\nDeeper\n^^^^^^\n\nDeepest\n+++++++\ntext\n"
    )
    assert headings(asciidoc_blocks(text)) == [
        (1, "git-demo(1)"), (2, "NAME"), (2, "OPTIONS"), (3, "Sub part"), (4, "Deeper"), (5, "Deepest")
    ]  # fmt: skip


def test_underline_spans_the_title_give_or_take_two() -> None:
    """An underline more than two characters longer or shorter than its line makes no title."""
    assert headings(asciidoc_blocks("Usage\n-------\n\nbody\n")) == [(2, "Usage")]
    assert headings(asciidoc_blocks("Usage\n---\n\nbody\n")) == [(2, "Usage")]
    assert headings(asciidoc_blocks("Use\n--------\nbody\n--------\n")) == []


def test_listing_block_lines_are_not_titles() -> None:
    """The last line of a listing block over its closing delimiter is no title, nor is a block title."""
    text = (
        "Usage\n-----\n\nFor example:\n\n------------\n$ git demo --all\n------------\n\n"
        "------------------------------------------------\n$ git demo start\n$ git demo stop\n"
        "------------------------------------------------\n\n.Example\n--------\n$ git demo\n--------\n\n"
        "------------\n$ git gc -q\n------------\n"
    )
    assert headings(asciidoc_blocks(text)) == [(2, "Usage")]


def test_delimited_blocks_hide_titles_and_entries() -> None:
    """Lines inside example, sidebar, literal and comment blocks are neither titles nor entries."""
    text = "= Guide\n\n====\n== Not a title\n--flag::\n====\n\n****\nNo\n--\n****\n\n////\n== Nor this\n////\n"
    assert headings(asciidoc_blocks(text)) == [(1, "Guide")]


def test_anchors_and_closing_marks_are_not_in_titles() -> None:
    """[[id]] anchors and a one-line title's closing = run are left out of the title."""
    text = "OPTIONS[[OPTIONS]]\n------------------\n\n[[intro]]\n== Introduction ==\n\ntext\n"
    assert headings(asciidoc_blocks(text)) == [(2, "OPTIONS"), (2, "Introduction")]


def test_preprocessor_line_may_precede_a_title() -> None:
    """A title right after ifndef::...[] (gone before titles are read) is still a title."""
    text = "Intro.\n\nifndef::git-shortlog[]\nCommit Ordering\n~~~~~~~~~~~~~~~\n\nBy default...\n"
    assert headings(asciidoc_blocks(text)) == [(3, "Commit Ordering")]


def test_labeled_entries_are_in_trails() -> None:
    """Consecutive labels are one entry; + and open blocks keep text in it; a plain paragraph ends it."""
    text = (
        "OPTIONS\n-------\n-k::\n--keep::\n\tKeep things.\n+\nMore about keeping.\n\n"
        "--mode::\n\tModes:\n+\n--\nFirst mode.\n\nSecond mode.\n--\n\n"
        "--all::\n\tEverything.\n\nA paragraph after the list.\n\n"
        "CONFIGURATION\n-------------\ncore.demo::\n\tA key.\n"
    )
    assert trail_of(text, "More about keeping.") == ("OPTIONS", "-k, --keep")
    assert trail_of(text, "Second mode.") == ("OPTIONS", "--mode")
    assert trail_of(text, "Everything.") == ("OPTIONS", "--all")
    assert trail_of(text, "A paragraph after the list.") == ("OPTIONS",)
    assert trail_of(text, "A key.") == ("CONFIGURATION", "core.demo")


def test_manual_page_is_sniffed_as_asciidoc() -> None:
    """A git-style manual page (underlined titles, listing blocks, labels, linkgit:) is AsciiDoc, not reST."""
    text = (
        "git-demo(1)\n===========\n\nNAME\n----\ngit-demo - Show things\n\nSYNOPSIS\n--------\n[verse]\n"
        "'git demo' [--all]\n\nDESCRIPTION\n-----------\nShows things, see linkgit:git-log[1].\n\n"
        "------------\n$ git demo\n$ git demo --all\n------------\n\nOPTIONS\n-------\n--all::\n\tAll of them.\n"
    )
    assert kind_for(text, "git-demo.txt") is Kind.ASCIIDOC


def test_rest_with_directives_stays_rest() -> None:
    """Underlined titles with a reST directive stay reST, whatever AsciiDoc-like lines are there."""
    text = "Title\n=====\n\n.. function:: demo(x)\n\n   Does.\n\n+\n\nSection\n-------\n\nSee link:x[y].\n"
    assert kind_for(text, None) is Kind.RST


def test_rest_fields_do_not_make_asciidoc() -> None:
    """reST docinfo fields (:Author:) look like AsciiDoc attribute entries; underlined titles stay reST."""
    text = ":Author: A. M. Kuchling\n:Release: 0.32\n\nIntroduction\n============\n\nText.\n\nModularity\n----------\n"
    assert kind_for(text, None) is Kind.RST
