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
    """A counter that always says twice the budget: MAX_PACKS packs, then the smallest answer (room 1),
    returned over budget (the callers' last resort)."""
    built: list[int] = []

    def build(budget: int) -> str:
        built.append(budget)
        return words(budget)

    result, tokens = fit_by(lambda text: 200, 100, build, str)
    assert len(built) == MAX_PACKS + 1
    assert built == [100, 49, 23, 10, 1]
    assert (result, tokens) == (words(1), 200)


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


def test_without_grow_an_answer_far_under_budget_is_packed_once() -> None:
    """The default: a first pack counted at 60% of the budget is the result (doc_window, context_recall)."""
    built: list[int] = []

    def build(budget: int) -> str:
        built.append(budget)
        return words(budget)

    assert fit_by(lambda text: len(text.split()) * 6 // 10, 100, build, str) == (words(100), 60)
    assert built == [100]


def test_grow_packs_again_larger_by_the_share_left_unused() -> None:
    """Counted at 60 of 100: the next pack gets 100 * 100 // 60 = 166; counted at 99 it is the result."""
    loop = fitting(100, words, str, grow=True)
    assert next(loop) == words(100)
    assert loop.send(60) == words(166)
    try:
        loop.send(99)  # within GROW_SLACK (1%) of the budget: no further pack
    except StopIteration as done:
        assert done.value == (words(166), 99)
    else:
        raise AssertionError("the loop went on within GROW_SLACK of the budget")


def test_grow_keeps_the_largest_pack_that_fits_and_never_reaches_one_counted_over() -> None:
    """A grown pack counted over is not the answer; the next lies between the two, and the loop ends at
    MAX_PACKS with the largest pack that counted within the budget."""
    loop = fitting(100, words, str, grow=True)
    assert next(loop) == words(100)
    assert loop.send(50) == words(200)
    assert loop.send(110) == words(180)  # 200 * 100 // 110 - 1
    assert loop.send(90) == words(199)  # 180 * 100 // 90 = 200, below the 200 counted over
    try:
        loop.send(101)  # over again: MAX_PACKS packs made
    except StopIteration as done:
        assert done.value == (words(180), 90)
    else:
        raise AssertionError("the loop went on after MAX_PACKS packs")
    assert MAX_PACKS == 4


def test_grow_stops_when_no_room_lies_between_a_fit_and_an_overshoot() -> None:
    """Fit at 100 words, over at 101: nothing to try between them, the fitting pack is the answer."""
    built: list[int] = []

    def build(budget: int) -> str:
        built.append(budget)
        return words(budget)

    counts = iter([90, 120])
    loop = fitting(100, build, str, grow=True)
    text = next(loop)
    assert text == words(100)
    assert loop.send(next(counts)) == words(111)
    built.clear()
    try:
        loop.send(next(counts))  # 111 over: 111 * 100 // 120 - 1 = 91 is not above the 100 that fit
    except StopIteration as done:
        assert done.value == (words(100), 90)
    else:
        raise AssertionError("the loop went on with no room between a fit and an overshoot")
    assert built == []


def test_a_grown_marked_answer_is_the_pack_chosen_with_its_own_text_and_count() -> None:
    """marked_fitting with grow returns the largest pack that fitted, its text as counted (mark inside), not the last."""
    loop = marked_fitting(100, marked, str, estimated=True, grow=True)
    assert next(loop) == marked(100, True)
    assert loop.send((50, False)) == marked(200, True)
    assert loop.send((95, False)) == marked(210, True)  # 200 * 100 // 95
    assert returned(loop, (104, False)) == Fitted(marked(200, True), marked(200, True), 95, False)


def test_a_grown_answer_unmarked_by_an_exact_count_stays_unmarked() -> None:
    """Guessed estimated, counted exactly: the same pack unmarked is counted, then grown unmarked."""
    loop = marked_fitting(100, marked, str, estimated=True, grow=True)
    assert next(loop) == marked(100, True)
    assert loop.send((50, True)) == words(100)
    assert loop.send((49, True)) == words(204)  # 100 * 100 // 49
    assert returned(loop, (99, True)) == Fitted(words(204), words(204), 99, True)


def lines(budget: int) -> str:
    """An answer that grows by whole lines of 10 words: every room from 10n to 10n+9 builds the same text
    (a packer whose last window cannot lose a line for a few tokens less)."""
    return words(budget // 10 * 10)


def test_a_text_counted_over_is_never_counted_again() -> None:
    """Grown to 125 rooms (120 words) and counted 2 over, the next room (121) builds the same 120 words,
    which would count over again: the loop builds smaller rooms uncounted, each twice as far below
    the overshoot (117), and counts the first text that differs, 110 words, which fit. Growing from
    there (120) meets the 120 words again: nothing new to count, the 110 words are the answer."""
    built: list[int] = []
    counted: list[str] = []
    counts = {words(100): 80, words(120): 102, words(110): 97}

    def build(budget: int) -> str:
        built.append(budget)
        return lines(budget)

    loop = fitting(100, build, str, grow=True)
    text = next(loop)
    try:
        while True:
            counted.append(text)
            text = loop.send(counts[text])
    except StopIteration as done:
        assert done.value == (words(110), 97)
    assert counted == [words(100), words(120), words(110)]
    assert built == [100, 125, 121, 117, 120]  # 120 * 2 below 125 would be under the 117 that fit


def test_shrinking_never_counts_the_same_text_twice() -> None:
    """Without grow, a pack counted over whose smaller rooms build the same text: counted once, then
    the smallest text that differs is counted; when none is reached, the loop stops."""
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return 101  # always over

    result, tokens = fit_by(count, 100, lines, str)
    assert len(counted) == len(set(counted))
    assert tokens == 101 and result == counted[-1]


def test_a_pack_counted_twice_the_budget_and_built_again_alike_is_shrunk_further() -> None:
    """Counted 200 against 100, and the next room (49) builds the same text: rooms below it are
    tried, uncounted, until one differs (24 builds the answer that fits). Stepping twice as far below
    the overshoot would go below room 1 at once, and the pack over budget would be returned."""

    def build(budget: int) -> str:
        return words(100) if budget >= 40 else words(80)  # one chunk that cannot be cut above room 40

    assert fit_by(lambda text: 200 if text == words(100) else 80, 100, build, str) == (words(80), 80)


def test_a_text_rebuilt_by_a_mark_flip_is_never_counted_again() -> None:
    """Marked at first, the first pack counts exactly: unmarked, it is counted again, 2 over. The next
    room (103) builds that unmarked text again: it is not counted a second time (the memo holds the
    text counted, not the marked one yielded first); a smaller room is, and fits."""
    budget = 105
    seen: list[str] = []

    def build(room: int, estimated: bool) -> str:
        return lines(room) + (" estimated" if estimated else "")

    loop = marked_fitting(budget, build, str, estimated=True)
    text = next(loop)
    try:
        while True:
            seen.append(text)
            text = loop.send((len(text.split()) + 6, True))  # exact: 6 tokens the packer did not see
    except StopIteration as done:
        fitted: Fitted[str] = done.value
    assert len(seen) == len(set(seen)), seen
    assert fitted == Fitted(words(90), words(90), 96, True)


def test_an_answer_that_never_fits_keeps_the_exactness_of_its_count() -> None:
    """The smallest answer over budget, counted exactly, then built again alike: the answer returned
    is the pack counted, said to be exact (not a rebuilt copy that was never counted)."""
    loop = marked_fitting(100, lambda room, estimated: marked(120, estimated), str, estimated=False)
    assert next(loop) == marked(120, False)
    assert returned(loop, (130, True)) == Fitted(marked(120, False), marked(120, False), 130, True)


def test_rooms_that_all_build_the_text_counted_over_are_passed_until_one_differs() -> None:
    """Counted 101 against 100, and every room from 68 to 100 builds that same text (one window that
    loses its line only below 68): the uncounted rebuilds go on past four steps until a room
    builds other text (67 and below: 90 tokens), which is counted and is the answer. Ending after four
    rebuilds (98, 96, 92, 84, 68) returned the pack counted over budget."""
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return 101 if text == words(100) else 90

    def build(room: int) -> str:
        return words(100) if room >= 68 else words(60)

    assert fit_by(count, 100, build, str) == (words(60), 90)
    assert counted == [words(100), words(60)]


def test_rebuilds_end_at_the_smallest_pack() -> None:
    """Every room builds the same text, counted over: the rebuilds stop at room 1 (the smallest answer,
    returned over budget as the callers' last resort), counted once; no endless loop."""
    built: list[int] = []

    def build(room: int) -> str:
        built.append(room)
        return words(100)

    assert fit_by(lambda text: 101, 100, build, str) == (words(100), 101)
    assert built[-1] == 1 and len(built) < 20


def test_when_max_packs_all_count_over_the_smallest_answer_is_counted() -> None:
    """Counts 50 tokens above what the packer sees (a header it did not size): rooms 100, 65, 55, 51
    count 150, 115, 105, 101, each shrunk by its share only. All MAX_PACKS over: the smallest answer
    (room 1) is counted once more and, within the budget, is the answer; the last pack over budget
    was returned before."""
    built: list[int] = []

    def build(room: int) -> str:
        built.append(room)
        return words(room)

    assert fit_by(lambda text: len(text.split()) + 50, 100, build, str) == (words(1), 51)
    assert built == [100, 65, 55, 51, 1]
