"""Windows over real reST (Python 3.11's docs): index entries and link targets left out, a sentence
shown apart whole, an API entry's first sentence above a window deep in it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ctxtrio.text import edges, passages
from ctxtrio.text.cutting import CUT_MARK
from ctxtrio.text.edges import far_sentence, hidden_lines, rarest_lines
from ctxtrio.text.passages import best_passage, marked_text
from ctxtrio.text.tokens import TokenModel

if TYPE_CHECKING:
    import pytest

MODEL = TokenModel.flat()  # fixed rates (cold rates change with the families covered)
FIXTURES = Path(__file__).parent / "fixtures"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Asked:
    """What a search over the Python docs gave packing for one chunk: the words its window looks
    for, those as asked, their rarity, the chunk's heading trail and token rate."""

    focus: list[str]
    named: list[str]
    rarity: dict[str, float]
    trail: tuple[str, ...]
    rate: float


def _shown(text: str, asked: Asked, budget: int, model: TokenModel = MODEL) -> str:
    """The window doc_search's packing finds in ``text`` for what was ``asked``, marked."""
    passage = best_passage(
        text, asked.focus, budget, model, asked.rate, rarity=asked.rarity, named=asked.named, trail=asked.trail
    )
    assert passage is not None
    return marked_text(text, passage)


#: "os.makedirs exist_ok" over the Python docs: what packing gives library.os's chunk #58.
MAKEDIRS = Asked(
    focus=["existok", "exist", "ok"],
    named=["os", "makedirs", "existok", "exist", "ok"],
    rarity={"os": 0.09, "makedirs": 0.955, "existok": 1.0, "exist": 0.241, "ok": 0.371},
    trail=(":mod:`os` --- Miscellaneous operating system interfaces", "Files and Directories", "function makedirs"),
    rate=0.426,
)
#: "How do I write a type hint for a callback function parameter?": library.typing's chunk #19.
CALLBACK = Asked(
    focus=["write", "hint", "callback", "function", "parameter"],
    named=["write", "type", "hint", "callback", "function", "parameter"],
    rarity={"write": 0.186, "type": 0.06, "hint": 1.0, "callback": 0.499, "function": 0.024, "parameter": 0.156},
    trail=(
        ":mod:`typing` --- Support for type hints",
        "Module contents",
        "Special typing primitives",
        "Special forms",
        "data Optional",
    ),
    rate=0.39,
)
#: "How do I add an if condition to a case in a match statement?": reference.compound_stmts's chunk #14.
GUARDS = Asked(
    focus=["add", "condition", "case"],
    named=["add", "condition", "case", "match", "statement"],
    rarity={"add": 0.268, "condition": 1.0, "case": 0.27, "match": 0.514, "statement": 0.41},
    trail=("Compound statements", "The :keyword:`!match` statement", "Overview"),
    rate=0.413,
)


def test_rest_index_entries_and_link_targets_are_hidden() -> None:
    """An ``.. index::`` directive, with the entries on its line or indented under it, and a link
    target (``.. _irrefutable_case:``) are hidden lines; other directives and text are not."""
    makedirs = _read("python_os_makedirs.rst.txt").split("\n")
    at = makedirs.index("   .. index::")
    assert makedirs[at + 1 : at + 3] == [
        "      single: directory; creating",
        "      single: UNC paths; and os.makedirs()",
    ]
    assert hidden_lines(makedirs) == frozenset({at, at + 1, at + 2})
    guards = _read("python_match_guards.rst.txt").split("\n")
    hidden = {guards[n] for n in hidden_lines(guards)}
    assert hidden == {".. index:: ! guard", ".. _irrefutable_case:", ".. index:: irrefutable case block, case block"}


def test_a_window_shows_no_index_entries() -> None:
    """makedirs' window (what a 500-token search gives its first hit) shows the directive, then a
    cut mark where the index entries were, then the first sentence; the index entries took 40
    tokens of it before. Within the budget."""
    text = _read("python_os_makedirs.rst.txt")
    for budget in (200, 227, 300):
        shown = _shown(text, MAKEDIRS, budget)
        assert f"exist_ok=False)\n\n{CUT_MARK}\n   Recursive directory creation function." in shown, budget
        assert "single:" not in shown and MODEL.estimate(shown) <= budget, budget


def test_hidden_lines_and_the_lines_between_are_one_cut_mark() -> None:
    """The match statement's overview, with the Guards section's first paragraph past its end:
    the window ends under the heading 'Guards', above its index line, and the sentence of the
    rarest word ('condition') is shown apart; the index line, the blank line after it and the
    lines up to that sentence are one cut mark, not two in a row (sized by the cold estimate, as a
    server without a tokenizer sizes them: the window then ends on that blank line)."""
    lines = _read("python_match_guards.rst.txt").splitlines(keepends=True)
    text = "".join(lines[:58])  # the chunk, as the docs are chunked
    cold = TokenModel.cold()
    for budget in (448, 452, 456, 460):
        shown = _shown(text, GUARDS, budget, cold)
        assert "Guards\n------\n" in shown and "* If the ``guard`` condition evaluates as true" in shown, budget
        assert f"{CUT_MARK}\n{CUT_MARK}" not in shown and cold.estimate(shown) <= budget, budget


def test_a_sentence_shown_apart_is_whole_when_a_third_of_the_room_holds_it() -> None:
    """The tutorial's 'Keyword-Only Arguments': the sentence of the rarest word past the window,
    "To mark parameters as *keyword-only*, indicating the parameters must be passed / by keyword
    argument, place an ``*`` in the arguments list just before the first / *keyword-only*
    parameter.", is three lines; in a quarter of the room only its first fitted, and the answer is
    on the second. A third holds it whole; where even a third does not, a quarter's part as before."""
    raws = _read("python_controlflow_keyword_only.rst.txt").split("\n")
    costs = [math.ceil((len(raw) + 1) * 0.377) for raw in raws]  # sized as packing sizes them
    first = raws.index("To mark parameters as *keyword-only*, indicating the parameters must be passed")
    core = (4, 5)  # the window's core a search settles on: "If ``/`` and ``*`` are not present ..."
    rarest = [first]
    hidden = [False] * len(raws)
    for room in (216, 250, 280):
        assert far_sentence(raws, costs, hidden, rarest, core, room) == (first, first + 2), room
    assert far_sentence(raws, costs, hidden, rarest, core, 200) == (first, first)  # 3 lines need 71 tokens
    assert rarest_lines([frozenset({0}) if n == first else frozenset() for n in range(len(raws))], [1.0]) == rarest


def test_a_sentence_shown_apart_not_whole_in_a_third_is_cut_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finished in a third of the room it would still be cut: then what a quarter holds, as before."""
    raws = _read("python_controlflow_keyword_only.rst.txt").split("\n")
    costs = [math.ceil((len(raw) + 1) * 0.377) for raw in raws]
    first = raws.index("To mark parameters as *keyword-only*, indicating the parameters must be passed")
    costs[first + 2] = 40  # the sentence's last line made too long for a third of 216
    hidden = [False] * len(raws)
    assert far_sentence(raws, costs, hidden, [first], (4, 5), 216) == (first, first)
    monkeypatch.setattr(edges, "_WHOLE_SHARE", 4)
    assert far_sentence(raws, costs, hidden, [first], (4, 5), 216) == (first, first)


def test_a_window_deep_in_an_api_entry_shows_its_first_sentence_above() -> None:
    """typing's `.. data:: Callable`: the window settles on 'such function types are rarely used as
    callback types', 200 tokens below the entry's directive and its first sentence, "Callable type;
    ``Callable[[int], str]`` is a function of (int) -> str.", the answer; no line above defines the
    query's rarest word ('hint'), so the entry's directive and first sentence are shown above the
    window, with a cut mark between, within the budget."""
    text = _read("python_typing_callable.rst.txt")
    for budget in (210, 260, 310):
        shown = _shown(text, CALLBACK, budget)
        lead = ".. data:: Callable\n\n   Callable type; ``Callable[[int], str]`` is a function of (int) -> str.\n"
        assert shown.startswith(f"{CUT_MARK} {lead}{CUT_MARK}\n"), budget
        assert "rarely used as callback types" in shown and MODEL.estimate(shown) <= budget, budget


def test_no_entry_line_above_a_window_at_its_entry_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A window that starts at its entry's directive, or lies in no API entry (under a heading),
    shows nothing apart above it."""
    text = _read("python_typing_callable.rst.txt")
    raws = text.split("\n")
    at = raws.index(".. data:: Callable")
    assert passages._entry_line(raws, frozenset({at}), at, at + 5) == [at]
    assert passages._entry_line(raws, frozenset({at}), at, at) == []
    assert passages._entry_line(raws, frozenset(), 0, at) == []  # no entry start at or above: line 0 is none
    assert passages._entry_line(["Title", "=====", "", "text"], frozenset({0}), 0, 3) == []  # a heading is no API entry


def test_the_definition_shown_above_a_window_skips_its_index_entries() -> None:
    """makedirs' entry, asked about a later note (when the directory 'existed'): the window is its
    versionchanged notes, and the directive defining the rarest word, makedirs, is shown above it
    with its first sentence; the index entries between them are a cut mark (before, they were taken
    for that sentence, and being hidden lines, nothing was shown above)."""
    text = _read("python_os_makedirs.rst.txt")
    existed = Asked(
        focus=["existed", "raise"],
        named=["makedirs", "existed", "raise"],
        rarity={"makedirs": 1.0, "existed": 0.6, "raise": 0.2},
        trail=MAKEDIRS.trail,
        rate=0.426,
    )
    lead = f".. function:: makedirs(name, mode=0o777, exist_ok=False)\n\n{CUT_MARK}\n   Recursive directory creation"
    for budget in (380, 400, 420):
        shown = _shown(text, existed, budget)
        assert shown.startswith(f"{CUT_MARK} {lead}"), budget
        assert "and the directory existed" in shown and MODEL.estimate(shown) <= budget, budget


#: "Why doesn't Python ship with setuptools and twine built in?": distributing/index's chunk #2
#: (python_distributing_index.rst.txt), which starts with two external link targets.
SHIP = Asked(
    focus=["ship", "setuptools", "twine", "built"],
    named=["python", "ship", "setuptools", "twine", "built"],
    rarity={"python": 0.007, "ship": 0.72, "setuptools": 0.383, "twine": 1.0, "built": 0.067},
    trail=("Distributing Python Modules", "Open source licensing and collaboration"),
    rate=0.357,
)


def test_external_link_targets_are_hidden() -> None:
    """A link target that names a URL (``.. _setuptools: https://...``, its name backquoted or not,
    the URL perhaps on the indented line below) renders as nothing on the page, as a label does; a
    line that only starts like one is kept."""
    raws = [
        ".. _setuptools: https://setuptools.readthedocs.io/en/latest/",
        ".. _`Python Packaging User Guide`: https://packaging.python.org",
        ".. _label:",
        ".. _Project structure: \\",
        "   https://packaging.python.org/tutorials/packaging-projects/#packaging-your-project",
        "",
        ".. _setuptools: is a tool, and so on",
    ]
    assert hidden_lines(raws) == frozenset({0, 1, 2, 3, 4})


def test_a_window_does_not_settle_on_an_external_link_target() -> None:
    """The rarest word but one asked for ('setuptools') on the link target at the chunk's top made it
    the window's core there (what a 1,000-token search gives its first hit: 452 tokens), and the
    window, kept above 'Installing the tools' (a heading its trail lacks), ended on that heading
    without the sentence under it that answers. Hidden, the target holds no word, and the window
    shows the answer."""
    shown = _shown(_read("python_distributing_index.rst.txt"), SHIP, 452)
    assert "The standard library does not include build tools that support modern" in shown
    assert "readthedocs" not in shown and MODEL.estimate(shown) <= 452
