"""What a window inside an API entry shows of the entry's head (Python 3.11's docs): its directive
block whole, its first sentence above a small window, and no author lines."""

from __future__ import annotations

import math
from pathlib import Path

from ctxtrio.text.cutting import CUT_MARK
from ctxtrio.text.edges import hidden_lines, lead_sentence
from ctxtrio.text.passages import best_passage, marked_text
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.flat()
FIXTURES = Path(__file__).parent / "fixtures"
#: "How do I write a type hint for a callback function parameter?": library.typing's chunk #19
#: (as tests/text/test_windows_rst.py asks it).
FOCUS = ["write", "hint", "callback", "function", "parameter"]
NAMED = ["write", "type", "hint", "callback", "function", "parameter"]
RARITY = {"write": 0.186, "type": 0.06, "hint": 1.0, "callback": 0.499, "function": 0.024, "parameter": 0.156}
TRAIL = (":mod:`typing` --- Support for type hints", "Module contents", "Special forms", "data Optional")


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _shown(text: str, budget: int) -> str:
    passage = best_passage(text, FOCUS, budget, MODEL, 0.39, rarity=RARITY, named=NAMED, trail=TRAIL)
    assert passage is not None
    return marked_text(text, passage)


def test_a_small_window_deep_in_an_api_entry_shows_the_entry_head_above() -> None:
    """typing's `.. data:: Callable` in a window of under 200 tokens (a search's third or fourth
    hit): the window settled on 'rarely used as callback types', below the directive and its first
    sentence, which say what the entry is; they are shown above it, a cut mark between, within the
    budget, with the lines about the query's rarest word below (before, only from 200 tokens)."""
    text = _read("python_typing_callable.rst.txt")
    lead = ".. data:: Callable\n\n   Callable type; ``Callable[[int], str]`` is a function of (int) -> str.\n"
    for budget in (120, 150, 190):
        shown = _shown(text, budget)
        assert shown.startswith(f"{CUT_MARK} {lead}{CUT_MARK}\n"), budget
        assert "hint" in shown.split(lead)[1] and MODEL.estimate(shown) <= budget, budget


def test_a_small_window_holding_the_first_sentence_shows_no_head_apart() -> None:
    """A window that reaches the entry's first sentence by itself is shown as it is: nothing apart."""
    text = _read("python_typing_callable.rst.txt")
    raws = text.split("\n")
    at = raws.index(".. data:: Callable")
    entry = "\n".join(raws[at:])  # the entry alone: its directive and sentence are the window's top
    shown = _shown(entry, 150)
    assert CUT_MARK not in shown.split("\n")[1:3] and shown.count(".. data:: Callable") <= 1


def test_the_first_sentence_of_an_entry_follows_its_directive_block() -> None:
    """lru_cache's directive gives two signatures on two lines: the second was taken for the entry's
    first sentence; the sentence shown is the one after the directive's block ("Decorator to wrap
    a function with a memoizing callable ... with the same arguments.")."""
    raws = _read("python_functools_lru_cache.rst.txt").split("\n")
    first = raws.index(".. decorator:: lru_cache(user_function)")
    assert raws[first + 1].strip() == "lru_cache(maxsize=128, typed=False)" and not raws[first + 2].strip()
    costs = [math.ceil((len(raw) + 1) * 0.4) for raw in raws]
    hidden = [False] * len(raws)
    core_first = raws.index("   The cache is threadsafe so the wrapped function can be used in multiple")
    end = raws.index("   function is periodically called with the same arguments.")
    assert lead_sentence(raws, costs, hidden, [first], core_first, 200) == (first, end)


def test_author_and_other_unshown_directives_are_hidden() -> None:
    """A module's author lines, and highlight / currentmodule / tabularcolumns directives,
    render as nothing on the page: hidden like index entries; the module's own directive and its
    synopsis, which a page shows, are not."""
    raws = [
        ":mod:`atexit` --- Exit handlers",
        "===============================",
        "",
        ".. module:: atexit",
        "   :synopsis: Register and execute cleanup functions.",
        "",
        ".. moduleauthor:: Skip Montanaro <skip@pobox.com>",
        ".. sectionauthor:: Skip Montanaro <skip@pobox.com>",
        "",
        ".. highlight:: python3",
        ".. currentmodule:: atexit",
        ".. tabularcolumns:: |l|L|",
        "",
        ".. codeauthor:: Someone",
        "The :mod:`atexit` module defines functions to register and unregister cleanup",
    ]
    assert hidden_lines(raws) == frozenset({6, 7, 9, 10, 11, 13})
