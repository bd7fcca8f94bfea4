"""A window grown into the tail of a paragraph above its core starts at the paragraph's head when a line of
it names a query word, or past the tail when the tail is code (:func:`~ctxtrio.text.edges.paragraph_head`).

The inputs are what ``doc_search`` passed :func:`~ctxtrio.text.passages.best_passage` for questions of the
retrieval dev sets over Debian's python3.11-doc manual (terms, rarity, the search's alike words, the room),
printed from a search of the whole manual; the chunks are cut as ingest cuts them (800 tokens, 80 overlap)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ctxtrio.text.chunking import Chunk, chunk_document
from ctxtrio.text.kinds import Kind
from ctxtrio.text.passages import best_passage, marked_text
from ctxtrio.text.tokens import TokenModel

if TYPE_CHECKING:
    from ctxtrio.text.words import Alike

SOURCES = Path("/usr/share/doc/python3.11/html/_sources/library")


def _chunk(name: str, holding: str) -> Chunk:
    """The chunk of the manual's ``name`` that holds ``holding``, cut as ingest cuts it."""
    text = (SOURCES / name).read_text(encoding="utf-8")
    chunks = chunk_document(text, chunk_tokens=800, overlap_tokens=80, model=TokenModel.cold(), kind=Kind.RST)
    return next(chunk for chunk in chunks if holding in chunk.text)


def _shown(
    chunk: Chunk,
    asked: list[str],
    room: int,
    rarity: dict[str, float],
    alike: Alike = (),
    named: list[str] | None = None,
) -> str:
    """The window ``doc_search`` shows of ``chunk`` in ``room`` tokens, checked to fit them."""
    model = TokenModel.cold()
    passage = best_passage(
        chunk.text, asked, room, model, chunk.tokens / len(chunk.text), rarity=rarity, named=named or asked,
        trail=chunk.trail, alike=alike,
    )  # fmt: skip
    assert passage is not None
    shown = marked_text(chunk.text, passage)
    assert model.estimate(shown) <= room
    return shown


@pytest.mark.skipif(not (SOURCES / "copy.rst.txt").is_file(), reason="needs Debian's python3.11-doc")
def test_a_window_on_a_paragraphs_tail_starts_at_its_head_when_the_head_names_a_query_word() -> None:
    """python22's "Does deepcopy actually duplicate modules and functions stored in my object?" with
    all-MiniLM-L6-v2: copy's second chunk, first hit, 523 tokens. Grown two lines below for each above,
    the window started on line 10, the tail "is compatible with the way these are treated by the
    :mod:`pickle` module.", and the answer opens that paragraph on line 7; line 8 holds "functions".
    The lines grown last below pay for the three lines above."""
    chunk = _chunk("copy.rst.txt", "This module does not copy types")
    asked = ["deepcopy", "duplicate", "modules", "functions", "stored", "object"]
    rarity = {"deepcopy": 1.0, "duplicate": 0.6733, "modules": 0.0949, "functions": 0.0517, "stored": 0.2874,
              "object": 0.0221, "copy": 0.2684, "unique": 0.4949}  # fmt: skip
    shown = _shown(chunk, asked, 523, rarity, alike=(("duplicate", ("copy", "unique")),))
    assert shown.startswith("[...] This module does not copy types like module, method, stack trace")
    assert "The :func:`deepcopy` function avoids these problems by:" not in shown  # above the paragraph: not shown


@pytest.mark.skipif(not (SOURCES / "typing.rst.txt").is_file(), reason="needs Debian's python3.11-doc")
def test_a_window_on_the_tail_of_an_example_starts_past_it() -> None:
    """python5's "TypeVar bound", keyword search: typing's chunk on ``ParamSpec``, second hit, 251 tokens.
    The window grown from ``ParamSpec``'s lines started inside ``add_logging``'s example, at its docstring;
    without the example's head those lines say nothing, and their room went to the hits after it (the fifth,
    typing's chunk on bound type variables, the answer, then fit)."""
    chunk = _chunk("typing.rst.txt", "def add_logging(f: Callable[P, T]) -> Callable[P, T]:")
    assert chunk.trail[-1] == "class ParamSpec"
    asked = ["typevar", "type", "var", "bound"]
    rarity = {"typevar": 1.0, "type": 0.0516, "var": 0.4342, "bound": 0.445}
    shown = _shown(chunk, asked, 251, rarity)
    assert "A type-safe decorator to add logging to a function." not in shown
    assert shown.startswith("[...]       @add_logging")


@pytest.mark.skipif(not (SOURCES / "secrets.rst.txt").is_file(), reason="needs Debian's python3.11-doc")
def test_the_tail_of_prose_stays_when_its_head_names_no_query_word() -> None:
    """The end of a sentence may be the answer: "32 bytes (256 bits) of randomness is sufficient" ends the
    paragraph of secrets' "How many bytes should tokens use?", whose head holds none of the query's words
    as written; a window starting on it keeps it (dropping every tail lost this answer at 500 tokens)."""
    chunk = _chunk("secrets.rst.txt", "it is believed that 32 bytes (256 bits)")
    asked = ["long", "security", "token", "guessed"]  # python20's question, all-MiniLM-L6-v2, a third hit at 500
    rarity = {"long": 0.2063, "random": 0.3711, "security": 0.4123, "token": 0.549, "guessed": 1.0, "key": 0.1624}
    named = ["long", "random", "security", "token", "guessed"]
    shown = _shown(chunk, asked, 232, rarity, (("token", ("key",)),), named)
    assert shown.startswith("[...] it is believed that 32 bytes (256 bits) of randomness is sufficient for")
