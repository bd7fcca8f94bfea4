"""Solving token rates from measured samples: pure arithmetic, no I/O.

Each sample is a text with a measured token count (``usage.prompt_tokens`` of a chat
with the sample as the only message, or a tokenize endpoint's count). A count is
modelled as ``overhead + Σ rate[f] · count[f]`` over the features ``f`` of
:class:`~ctxtrio.text.tokens.ScriptClass` (character classes and boundaries). The
overhead (chat template, BOS) is the same for every sample and never published; the
calibrator measures it directly (a one-character prompt) and passes it in, or it is
fitted as one more unknown.

The system is over-determined (many more samples than rates) and solved by
non-negative least squares, each row weighted by ``1 / count`` (between absolute and
relative error), by cyclic coordinate descent on the normal equations. The fit is
asymmetric (an expectile): a sample the rates under-count weighs
:data:`UNDER_WEIGHT` times more, refitted until the set of under-counted samples stops
changing. A symmetric fit under-counts about half the samples, and the uniform lift
that then makes every sample safe raises every class by the worst one's error (the
1.02-1.28 over-count of issue 9); the asymmetric fit leaves only small under-counts,
so the lift that :func:`publishable_rates` applies stays small. Implausible answers
raise :class:`~ctxtrio._errors.LLMResponseError` so the caller keeps its previous model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from .._errors import LLMResponseError
from ..text.tokens import ScriptClass

__all__ = ["MAX_RATE", "Measurement", "fit_rates", "publishable_rates"]

#: Plausible rates, tokens per character (or per boundary); above means bogus counts.
MAX_RATE: Final = 4.0
#: How much more an under-counted sample weighs than an over-counted one.
UNDER_WEIGHT: Final = 50.0
_REFITS: Final = 30
_SWEEPS: Final = 3000
_CONVERGED: Final = 1e-12


@dataclass(frozen=True, slots=True)
class Measurement:
    """One sample's feature counts and the token count the server reported."""

    counts: Mapping[ScriptClass, int]
    tokens: int


def fit_rates(
    samples: Sequence[Measurement], *, overhead: float | None = None
) -> tuple[dict[ScriptClass, float], float]:
    """The non-negative rates (and the overhead, unless given) that best explain ``samples``.

    Raise LLMResponseError if there are fewer samples than unknowns, if the counts do
    not grow with the text (every sample the same count), or a rate is implausible.
    """
    features = list(ScriptClass)
    if len(samples) <= len(features):
        raise ValueError(f"need more than {len(features)} samples, got {len(samples)}")
    if len({sample.tokens for sample in samples}) == 1:
        raise LLMResponseError(f"calibration: every sample counted {samples[0].tokens} tokens")
    fixed = overhead is not None
    rows = [([] if fixed else [1.0]) + [float(sample.counts.get(f, 0)) for f in features] for sample in samples]
    targets = [float(sample.tokens) - (overhead or 0.0) for sample in samples]
    solution = _expectile(rows, targets)
    fitted = overhead if overhead is not None else solution[0]
    rates = dict(zip(features, solution[0 if fixed else 1 :], strict=True))
    bad = {f.value: round(r, 3) for f, r in rates.items() if r > MAX_RATE}
    if bad:
        raise LLMResponseError(f"calibration: implausible rates (tokens/char) {bad}")
    if sum(rates.values()) <= 0.0:
        raise LLMResponseError("calibration: the counts do not grow with the text")
    return rates, fitted


def _expectile(rows: list[list[float]], targets: list[float]) -> list[float]:
    """Non-negative least squares where under-counted rows weigh :data:`UNDER_WEIGHT` times more."""
    base = [1.0 / max(1.0, target) for target in targets]
    under = [False] * len(rows)
    solution: list[float] | None = None
    for _ in range(_REFITS):
        weights = [(w * UNDER_WEIGHT if low else w) ** 0.5 for w, low in zip(base, under, strict=True)]
        solution = _nnls(rows, targets, weights, start=solution)
        predicted = [sum(v * x for v, x in zip(row, solution, strict=True)) for row in rows]
        now = [p < t for p, t in zip(predicted, targets, strict=True)]
        if now == under:
            break
        under = now
    assert solution is not None
    return solution


def publishable_rates(
    samples: Sequence[Measurement], rates: Mapping[ScriptClass, float], overhead: float, *, margin: float
) -> dict[ScriptClass, float]:
    """``rates`` scaled so no sample is under-counted (its count minus the overhead), times 1 + margin.

    After the asymmetric fit the lift is small (a few percent): the margin can be 0.
    """
    lift = 1.0
    for sample in samples:
        estimate = sum(rates[f] * n for f, n in sample.counts.items())
        if estimate > 0:
            lift = max(lift, (sample.tokens - overhead) / estimate)
    return {f: rate * lift * (1.0 + margin) for f, rate in rates.items()}


def _nnls(
    rows: list[list[float]], targets: list[float], weights: list[float], *, start: list[float] | None = None
) -> list[float]:
    """argmin Σ (w·(row·x − target))² subject to x ≥ 0, by coordinate descent from ``start``.

    Columns are scaled to unit norm first (an overhead column is all ones, the others
    count hundreds), so every coordinate step is well conditioned. Stops when a sweep
    changes nothing (or after :data:`_SWEEPS` sweeps).
    """
    size = len(rows[0])
    scaled = [[w * v for v in row] for row, w in zip(rows, weights, strict=True)]
    norms = [max(1e-12, sum(r[i] ** 2 for r in scaled) ** 0.5) for i in range(size)]
    scaled = [[v / n for v, n in zip(row, norms, strict=True)] for row in scaled]
    goals = [w * t for t, w in zip(targets, weights, strict=True)]
    gram = [[sum(r[i] * r[j] for r in scaled) for j in range(size)] for i in range(size)]
    rhs = [sum(r[i] * g for r, g in zip(scaled, goals, strict=True)) for i in range(size)]
    x = [v * n for v, n in zip(start, norms, strict=True)] if start is not None else [0.0] * size
    for _ in range(_SWEEPS):
        change = 0.0
        for i in range(size):
            if gram[i][i] <= 1e-18:
                continue
            others = sum(gram[i][j] * x[j] for j in range(size) if j != i)
            value = max(0.0, (rhs[i] - others) / gram[i][i])
            change = max(change, abs(value - x[i]))
            x[i] = value
        if change <= _CONVERGED:
            break
    return [value / n for value, n in zip(x, norms, strict=True)]
