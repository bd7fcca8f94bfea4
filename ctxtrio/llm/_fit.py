"""Solving token rates from measured samples: pure arithmetic, no I/O.

Each sample is a text with a measured token count (``usage.prompt_tokens`` of a chat
with the sample as the only message, or a tokenize endpoint's count). A count is
modelled as ``overhead + Σ rate[f] · count[f]`` over the features ``f`` of
:class:`~ctxtrio.text.tokens.ScriptClass` (character classes and boundaries); the
overhead (chat template, BOS) is the same for every sample and is fitted too, never
published.

The system is over-determined (many more samples than rates) and solved by
non-negative least squares on relative errors (each row divided by its count, so a
short sample weighs as much as a long one), by cyclic coordinate descent on the
normal equations. Then the rates are scaled up until no sample is under-counted,
and by ``margin`` on top. Implausible answers raise
:class:`~ctxtrio._errors.LLMResponseError` so the caller keeps its previous model.
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
_SWEEPS: Final = 3000


@dataclass(frozen=True, slots=True)
class Measurement:
    """One sample's feature counts and the token count the server reported."""

    counts: Mapping[ScriptClass, int]
    tokens: int


def fit_rates(samples: Sequence[Measurement]) -> tuple[dict[ScriptClass, float], float]:
    """The non-negative rates and overhead that best explain ``samples``.

    Raise LLMResponseError if there are fewer samples than unknowns, if the counts do
    not grow with the text (every sample the same count), or a rate is implausible.
    """
    features = list(ScriptClass)
    if len(samples) <= len(features):
        raise ValueError(f"need more than {len(features)} samples, got {len(samples)}")
    if len({sample.tokens for sample in samples}) == 1:
        raise LLMResponseError(f"calibration: every sample counted {samples[0].tokens} tokens")
    rows = [[1.0] + [float(sample.counts.get(f, 0)) for f in features] for sample in samples]
    weights = [max(1, sample.tokens) ** -0.5 for sample in samples]
    solution = _nnls(rows, [float(sample.tokens) for sample in samples], weights)
    overhead, rates = solution[0], dict(zip(features, solution[1:], strict=True))
    bad = {f.value: round(r, 3) for f, r in rates.items() if r > MAX_RATE}
    if bad:
        raise LLMResponseError(f"calibration: implausible rates (tokens/char) {bad}")
    if sum(rates.values()) <= 0.0:
        raise LLMResponseError("calibration: the counts do not grow with the text")
    return rates, overhead


def publishable_rates(
    samples: Sequence[Measurement], rates: Mapping[ScriptClass, float], overhead: float, *, margin: float
) -> dict[ScriptClass, float]:
    """``rates`` scaled so no sample is under-counted (its count minus the overhead), times 1 + margin.

    Unmeasured classes (rate 0 because no sample had them) keep a floor of the
    smallest non-zero rate: no class is assumed free.
    """
    lift = 1.0
    for sample in samples:
        estimate = sum(rates[f] * n for f, n in sample.counts.items())
        if estimate > 0:
            lift = max(lift, (sample.tokens - overhead) / estimate)
    return {f: rate * lift * (1.0 + margin) for f, rate in rates.items()}


def _nnls(rows: list[list[float]], targets: list[float], weights: list[float]) -> list[float]:
    """argmin Σ (w·(row·x − target))² subject to x ≥ 0, by coordinate descent.

    Columns are scaled to unit norm first (the overhead column is all ones, the
    others count hundreds), so every coordinate step is well conditioned.
    """
    size = len(rows[0])
    scaled = [[w * v for v in row] for row, w in zip(rows, weights, strict=True)]
    norms = [max(1e-12, sum(r[i] ** 2 for r in scaled) ** 0.5) for i in range(size)]
    scaled = [[v / n for v, n in zip(row, norms, strict=True)] for row in scaled]
    goals = [w * t for t, w in zip(targets, weights, strict=True)]
    gram = [[sum(r[i] * r[j] for r in scaled) for j in range(size)] for i in range(size)]
    rhs = [sum(r[i] * g for r, g in zip(scaled, goals, strict=True)) for i in range(size)]
    x = [0.0] * size
    for _ in range(_SWEEPS):
        for i in range(size):
            if gram[i][i] <= 1e-18:
                continue
            others = sum(gram[i][j] * x[j] for j in range(size) if j != i)
            x[i] = max(0.0, (rhs[i] - others) / gram[i][i])
    return [value / n for value, n in zip(x, norms, strict=True)]
