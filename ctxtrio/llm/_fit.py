"""Solving per-class token rates from measured samples: pure arithmetic, no I/O.

Each class has two samples, short and long, with a measured token count each
(``usage.prompt_tokens`` of a chat with the sample as the only message, or a
tokenize endpoint's count). A count is ``overhead + Σ rate[c] · chars[c]`` plus
noise; the difference long − short cancels the overhead (chat template, BOS), which
leaves one linear equation per class::

    Δtokens[k] = Σ_c rate[c] · Δchars[k][c]

Samples are mixed (code has letters, Korean has spaces), so the equations are solved
together, by Gaussian elimination with partial pivoting. Implausible answers raise
:class:`~ctxtrio._errors.LLMResponseError` so the caller keeps its previous model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .._errors import LLMResponseError
from ..text.tokens import ScriptClass

__all__ = ["MAX_RATE", "MIN_RATE", "Measurement", "fit_rates", "publishable_rates"]

#: Plausible rates, tokens per character; anything outside means the counts are bogus.
MIN_RATE: Final = 0.01
MAX_RATE: Final = 4.0


@dataclass(frozen=True, slots=True)
class Measurement:
    """One sample's character counts per class and the token count the server reported."""

    counts: Mapping[ScriptClass, int]
    tokens: int


def fit_rates(
    pairs: Mapping[ScriptClass, tuple[Measurement, Measurement]],
) -> dict[ScriptClass, float]:
    """Solve the rate of every class in ``pairs`` from its (short, long) measurements.

    Raise LLMResponseError if a count does not grow with the text, if the system is
    singular, or if a rate falls outside [MIN_RATE, MAX_RATE].
    """
    classes = list(pairs)
    rows: list[list[float]] = []
    for cls, (short, long) in pairs.items():
        delta_tokens = long.tokens - short.tokens
        if delta_tokens <= 0:
            raise LLMResponseError(
                f"calibration: {cls} counts do not grow with the text "
                f"({short.tokens} → {long.tokens} tokens)"
            )
        deltas = {c: long.counts.get(c, 0) - short.counts.get(c, 0) for c in ScriptClass}
        strays = [c.value for c, d in deltas.items() if d and c not in pairs]
        if strays:
            raise ValueError(f"samples of {cls} contain unmeasured classes {strays}")
        rows.append([float(deltas[c]) for c in classes] + [float(delta_tokens)])
    solution = _solve(rows)
    rates = dict(zip(classes, solution, strict=True))
    bad = {c.value: round(r, 4) for c, r in rates.items() if not MIN_RATE < r <= MAX_RATE}
    if bad:
        raise LLMResponseError(f"calibration: implausible rates (tokens/char) {bad}")
    return rates


def publishable_rates(
    measured: Mapping[ScriptClass, float], *, margin: float
) -> dict[ScriptClass, float]:
    """Rates for a TokenModel: OTHER lifted to at least PROSE, then every rate raised by ``margin``.

    OTHER lumps very different scripts (Cyrillic, Greek, Arabic, Devanagari, emoji, CJK
    punctuation); its sample measures a mix of some of them, and no script of it is
    assumed cheaper than English prose. The margin makes estimates lean high.
    """
    rates = dict(measured)
    if ScriptClass.PROSE in rates and ScriptClass.OTHER in rates:
        rates[ScriptClass.OTHER] = max(rates[ScriptClass.OTHER], rates[ScriptClass.PROSE])
    return {cls: rate * (1.0 + margin) for cls, rate in rates.items()}


def _solve(rows: list[list[float]]) -> list[float]:
    """Solve the square system given as augmented ``rows``; raise LLMResponseError if singular."""
    size = len(rows)
    matrix = [row[:] for row in rows]
    scale = max((abs(value) for row in matrix for value in row[:size]), default=0.0)
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(matrix[r][col]))
        if abs(matrix[pivot][col]) <= 1e-9 * max(scale, 1.0):
            raise LLMResponseError("calibration: the samples do not separate the classes")
        matrix[col], matrix[pivot] = matrix[pivot], matrix[col]
        for row in range(col + 1, size):
            factor = matrix[row][col] / matrix[col][col]
            if factor:
                for k in range(col, size + 1):
                    matrix[row][k] -= factor * matrix[col][k]
    solution = [0.0] * size
    for row in reversed(range(size)):
        known = sum(matrix[row][k] * solution[k] for k in range(row + 1, size))
        solution[row] = (matrix[row][size] - known) / matrix[row][row]
    return solution
