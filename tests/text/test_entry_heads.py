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


#: "copy everything from one already open file to another without reading it all into memory at once"
#: (python9's paraphrase): library.shutil's chunk #1, its search terms, rarities and trail as doc_search weighs them.
COPY_FOCUS = ["copy", "everything", "one", "already", "open", "another", "without", "reading", "all", "memory", "once"]
COPY_RARITY = {
    "copy": 0.458, "everything": 1.0, "one": 0.103, "already": 0.405, "open": 0.272, "file": 0.076,
    "another": 0.329, "without": 0.249, "reading": 0.515, "all": 0.063, "memory": 0.353, "once": 0.424,
}  # fmt: skip
COPY_TRAIL = (":mod:`shutil` --- High-level file operations", "Directory and files operations")


def test_a_small_window_right_under_the_first_sentence_shows_it_above() -> None:
    """shutil's `.. function:: copyfileobj` in a search's fourth hit at 1,000 tokens (116-138 tokens): the window
    settled on the lines about copying without looping and reading in chunks, right under the entry's first sentence, "Copy the
    contents of the file-like object *fsrc* to the file-like object *fdst*.", the answer. With no line between
    the two the sentence was never shown apart (a line at least had to be left out between), and the window,
    its room full, could not grow up to it. Now the directive and that sentence are shown above the lines
    about the query's words, within the budget (this excerpt ends sooner than the chunk: from 138 tokens its
    window reaches the sentence itself)."""
    text = _read("python_shutil_copyfileobj.rst.txt")
    model = TokenModel.cold()
    named = [*COPY_FOCUS[:5], "file", *COPY_FOCUS[5:]]
    lead = (
        ".. function:: copyfileobj(fsrc, fdst[, length])\n\n"
        "   Copy the contents of the file-like object *fsrc* to the file-like object *fdst*.\n"
    )
    raws = text.split("\n")
    costs = [math.ceil((len(raw) + 1) * 0.403) for raw in raws]
    directive = raws.index(".. function:: copyfileobj(fsrc, fdst[, length])")
    sentence = directive + 2
    assert lead_sentence(raws, costs, [False] * len(raws), [directive], sentence + 1, 100) is None
    assert lead_sentence(raws, costs, [False] * len(raws), [directive], sentence + 1, 100, touching=True) == (
        directive,
        sentence,
    )
    for budget in (116, 127):
        passage = best_passage(
            text, COPY_FOCUS, budget, model, 0.403, rarity=COPY_RARITY, named=named, trail=COPY_TRAIL
        )
        assert passage is not None
        shown = marked_text(text, passage)
        assert shown.startswith(f"{CUT_MARK} {lead}"), (budget, shown)
        assert "to copy the data without looping" in shown.split(lead)[1] and model.estimate(shown) <= budget, budget
