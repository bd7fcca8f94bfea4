"""Folds of lines equal but for their numbers (text/folds.py): every varying value kept, in order."""

from __future__ import annotations

from ctxtrio.text.folds import Fold, fitting_fold, fold
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.cold()


def test_numbers_equal_everywhere_stay_in_the_wording_and_varying_ones_become_slots() -> None:
    """'v2.3.1' is one value; a number equal in every line stays as it is."""
    found = fold(["deploy 1 of v2.3.1 took 41.5 s", "deploy 2 of v2.3.1 took 39 s", "deploy 3 of v2.3.1 took 40.2 s"])
    assert found == Fold(("deploy ", " of v2.3.1 took ", " s"), (("1", "2", "3"), ("41.5", "39", "40.2")), ("", None))
    assert found.count == 3
    assert found.line() == "deploy [1..3] of v2.3.1 took [41.5, 39, 40.2] s (×3)"


def test_an_even_step_is_a_range_and_anything_else_a_list() -> None:
    """A counter (any even step, down too) says every value as a range; two values, leading zeros or a
    repeated value are listed (a range of '007' would print back '7')."""
    line = fold([f"n {n} m {50 - 10 * n} z 00{n} r {n % 2}" for n in range(4)])
    assert line is not None
    assert line.line() == "n [0..3] m [50..20 step -10] z [000, 001, 002, 003] r [0, 1, 0, 1] (×4)"
    pair = fold(["x 1", "x 2"])
    assert pair is not None and pair.line() == "x [1, 2] (×2)"
    decimals = fold([f"p95 {0.05 * n:.2f} s, {9.5 - n / 2:.1f} GB free" for n in range(1, 4)])  # as many decimals each
    assert decimals is not None and decimals.line() == "p95 [0.05..0.15 step 0.05] s, [9.0..8.0 step -0.5] GB free (×3)"
    assert fold(["a 1.5", "a 1.0", "a 0.50"]) == Fold(("a ", ""), (("1.5", "1.0", "0.50"),), (None,))
    versions = fold(["pinned httpx 0.27", "pinned httpx 0.28.1"])  # a version is one value
    assert versions is not None and versions.line() == "pinned httpx [0.27, 0.28.1] (×2)"


def test_no_fold_when_the_wording_differs_or_no_number_varies() -> None:
    """The latest line then stands for them (entries.py's '(×N)' line)."""
    assert fold(["Retry 1 failed", "retry 2 failed"]) is None
    assert fold(["ok 3", "ok 3"]) is None
    assert fold(["only one 5"]) is None


def test_the_fitting_line_keeps_as_many_values_at_each_end_as_fit() -> None:
    found = fold([f"took {v} ms" for v in (5, 9, 2, 8, 1, 7, 3)])
    assert found is not None
    whole = found.line()
    assert fitting_fold(found, MODEL.estimate(whole), MODEL) == whole == "took [5, 9, 2, 8, 1, 7, 3] ms (×7)"
    two = "took [5, 9, +3 more, 7, 3] ms (×7)"
    assert fitting_fold(found, MODEL.estimate(two), MODEL) == two
    assert fitting_fold(found, MODEL.estimate(whole), MODEL, most=1) == "took [5, +5 more, 3] ms (×7)"
    assert fitting_fold(found, MODEL.estimate("took [5, +5 more, 3] ms (×7)") - 1, MODEL) is None
