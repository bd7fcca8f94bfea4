"""The fit loop: packed again smaller by the overshoot, at most MAX_PACKS times, whoever counts."""

from __future__ import annotations

from ctxtrio.text.fitting import MAX_PACKS, fit_by, fitting


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
