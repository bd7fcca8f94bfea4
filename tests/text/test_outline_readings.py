"""Tests for ctxtrio.text.extractive.first_sentence: how often an outline line takes markup out of its chunk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.text import extractive
from ctxtrio.text.prose import without_markup
from ctxtrio.text.tokens import TokenModel

if TYPE_CHECKING:
    import pytest

MODEL = TokenModel.flat()


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts ``extractive`` gives the real ``without_markup`` from now on, in order."""
    seen: list[str] = []

    def counting(text: str, *, headings: bool = False, signatures: bool = False) -> str:
        seen.append(text)
        return without_markup(text, headings=headings, signatures=signatures)

    monkeypatch.setattr(extractive, "without_markup", counting)
    return seen


def test_an_outline_line_takes_markup_out_of_its_chunk_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk with prose and no code to open with has its markup taken out once for its outline line (it was
    twice, every line: the whole text again, built before the first reading was looked at)."""
    seen = _counted(monkeypatch)
    text = ".. note::\n\n   Fixtures are requested by name.\n\nA test asks for what it needs.\n"
    assert (
        extractive.first_sentence(text, max_tokens=40, model=MODEL, past_code=True) == "Fixtures are requested by name."
    )
    assert seen == [text]


def test_a_chunk_opening_with_code_is_read_past_it_then_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the code a chunk opens with when prose follows; the whole text without markup, then as it is, only
    when that holds headings alone (each read once)."""
    seen = _counted(monkeypatch)
    prose = "    x = 1\n\nThe value is one.\n"
    assert extractive.first_sentence(prose, max_tokens=40, model=MODEL, past_code=True) == "The value is one."
    assert seen == ["The value is one.\n"]
    seen.clear()
    headed = "    x = 1\n\nSetup\n=====\n"
    assert extractive.first_sentence(headed, max_tokens=40, model=MODEL, past_code=True) == "x = 1"
    assert seen == ["Setup\n=====\n", headed]
