"""The fit loop: packed again smaller by the overshoot, at most MAX_PACKS times, whoever counts; marks inside the count."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.text.fitting import MAX_PACKS, Fitted, fit_by, fitting, marked_fitting

if TYPE_CHECKING:
    from collections.abc import Generator


def words(budget: int) -> str:
    """An answer of ``budget`` one-token words (what a packer by the estimate would build)."""
    return " ".join(["w"] * budget)


def test_an_answer_within_budget_is_packed_once() -> None:
    """A first pack that counts within the budget is the result, counted once."""
    built: list[int] = []

    def build(budget: int) -> str:
        built.append(budget)
        return words(budget)

    assert fit_by(lambda text: len(text.split()), 100, build, str) == (words(100), 100)
    assert built == [100]


def test_an_overshoot_shrinks_the_next_pack_by_its_share() -> None:
    """Counted 25% over: the next pack gets the budget cut by that share, less one."""
    loop = fitting(100, words, str)
    assert next(loop) == words(100)
    assert loop.send(125) == words(79)  # 100 * 100 // 125 - 1
    try:
        loop.send(79)
    except StopIteration as done:
        assert done.value == (words(79), 79)
    else:
        raise AssertionError("the loop went on after a fitting count")


def test_a_count_that_never_fits_stops_after_max_packs() -> None:
    """A counter that always says twice the budget: MAX_PACKS packs, the last one returned."""
    built: list[int] = []

    def build(budget: int) -> str:
        built.append(budget)
        return words(budget)

    result, tokens = fit_by(lambda text: 200, 100, build, str)
    assert len(built) == MAX_PACKS
    assert built == [100, 49, 23, 10]
    assert (result, tokens) == (words(10), 200)


def marked(budget: int, estimated: bool) -> str:
    """A packed answer of ``budget`` words, saying "estimated" when built with the mark."""
    return words(budget) + (" estimated" if estimated else "")


def returned(loop: Generator[str, tuple[int, bool], Fitted[str]], count: tuple[int, bool]) -> Fitted[str]:
    """What ``loop`` returns once sent ``count`` (AssertionError if it asks for another count instead)."""
    try:
        loop.send(count)
    except StopIteration as done:
        fitted: Fitted[str] = done.value
        return fitted
    raise AssertionError(f"the loop went on after {count}")


def test_a_count_that_falls_back_marks_the_same_pack_and_counts_it_again() -> None:
    """Guessed exact, counted by the estimate: the same pack, marked, is counted; that text is the answer."""
    loop = marked_fitting(100, marked, str, estimated=False)
    assert next(loop) == words(100)
    assert loop.send((90, False)) == marked(100, True)
    assert returned(loop, (91, False)) == Fitted(marked(100, True), marked(100, True), 91, False)


def test_an_exact_count_unmarks_a_marked_text_once() -> None:
    """Guessed estimated, counted exactly: unmarked and counted again; a later fallback marks it for good."""
    loop = marked_fitting(100, marked, str, estimated=True)
    assert next(loop) == marked(100, True)
    assert loop.send((90, True)) == words(100)
    assert loop.send((89, False)) == marked(100, True)
    assert returned(loop, (90, True)) == Fitted(marked(100, True), marked(100, True), 90, True)  # no second unmark


def test_the_mark_is_counted_against_the_budget() -> None:
    """A mark that pushes the answer over its budget makes the next pack smaller, built marked."""
    loop = marked_fitting(100, marked, str, estimated=False)
    assert next(loop) == words(100)
    assert loop.send((100, False)) == marked(100, True)
    assert loop.send((101, False)) == marked(98, True)  # 100 * 100 // 101 - 1
    assert returned(loop, (99, False)) == Fitted(marked(98, True), marked(98, True), 99, False)
