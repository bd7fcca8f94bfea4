"""Tests for ctxtrio.text.blocks: the structural blocks chunking packs."""

from __future__ import annotations

import random

from ctxtrio.text.blocks import iter_blocks


def test_blocks_tile_random_text() -> None:
    """Blocks are contiguous, non-empty and cover the whole text, for any input."""
    rng = random.Random(77)
    parts = [
        "# H\n",
        "text\n",
        "\n",
        "```\n",
        "~~~~\n",
        "- a\n",
        "===\n",
        "---\n",
        "  \n",
        "1) b\n",
        "\r\n",
        "#\n",
        "x",
        "数据\n",
        "    code\n",
    ]
    for _ in range(500):
        text = "".join(rng.choice(parts) for _ in range(rng.randrange(1, 30)))
        blocks = list(iter_blocks(text))
        assert blocks[0].start == 0 and blocks[-1].end == len(text)
        assert all(b.start < b.end for b in blocks)
        assert all(a.end == b.start for a, b in zip(blocks, blocks[1:]))


def test_blank_lines_join_the_block_before() -> None:
    """Blank lines belong to the preceding block; leading ones to the first block."""
    text = "\n\npara\n\n\nnext\n"
    assert [text[b.start : b.end] for b in iter_blocks(text)] == ["\n\npara\n\n\n", "next\n"]


def test_atx_headings_strip_markers() -> None:
    """ATX headings carry their level and text without the closing hashes."""
    text = "## Install it ##\n#### Deep\n"
    assert [(b.level, b.title) for b in iter_blocks(text)] == [(2, "Install it"), (4, "Deep")]


def test_fence_content_is_not_structure() -> None:
    """Headings and blank lines inside a fence do not split it."""
    text = "intro\n\n```sh\n# not a heading\n\nmore\n```\nafter\n"
    blocks = [(text[b.start : b.end], b.level) for b in iter_blocks(text)]
    assert blocks == [("intro\n\n", 0), ("```sh\n# not a heading\n\nmore\n```\n", 0), ("after\n", 0)]


def test_tilde_fence_not_closed_by_backticks() -> None:
    """A ~~~ fence is closed only by ~~~ of at least its length, not by ```."""
    text = "~~~~\na\n```\n~~~\nb\n~~~~\ntail\n"
    blocks = [text[b.start : b.end] for b in iter_blocks(text)]
    assert blocks == ["~~~~\na\n```\n~~~\nb\n~~~~\n", "tail\n"]


def test_unclosed_fence_runs_to_end() -> None:
    """An unclosed fence runs to the end of the text, headings included."""
    text = "p\n\n```\ncode\n# h\n"
    assert [text[b.start : b.end] for b in iter_blocks(text)] == ["p\n\n", "```\ncode\n# h\n"]


def test_hash_lines_without_text_are_not_headings() -> None:
    """`#` alone, `#tag` and `# ----` are ordinary lines, not headings."""
    text = "#\n\n#tag\n\n# ----\n\n#### Real\n"
    assert [(b.level, b.title) for b in iter_blocks(text) if b.level] == [(4, "Real")]


def test_list_items_are_blocks() -> None:
    """Each list item starts a block; its continuation lines stay with it."""
    text = "- one\n- two\n  more\n1. three\n"
    assert [text[b.start : b.end] for b in iter_blocks(text)] == ["- one\n", "- two\n  more\n", "1. three\n"]
