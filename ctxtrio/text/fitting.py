"""The fit loop: an answer packed again, smaller, until its text counts within the budget. Pure.

``build(effective_budget)`` packs by the estimate (cheap; it must return smaller answers
for smaller budgets). Its text is counted; when the count is over the budget (the
estimate was low, or headers and notes were not packed), the answer is packed again
with the budget shrunk by the overshoot, at most :data:`MAX_PACKS` packs in all. If even
the smallest answer ``build`` can give is over (one chunk cut to its minimum), that one
is the result.

Who counts is the caller's business: :func:`fitting` is a generator that yields each
text to count and is sent its count back (so the server's tokenizer, awaited in
:mod:`ctxtrio.llm.counting`, and the estimate, :func:`fit_by`, drive the same loop);
it returns the last answer and its count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

__all__ = ["MAX_PACKS", "fit_by", "fitting"]

_T = TypeVar("_T")

#: Packs of one answer at most (the first, by the estimate, and up to three smaller ones).
MAX_PACKS: Final = 4


def fitting(
    budget_tokens: int, build: Callable[[int], _T], text_of: Callable[[_T], str]
) -> Generator[str, int, tuple[_T, int]]:
    """Yield each packed answer's text, take its count; return the answer that fits and its count."""
    effective = budget_tokens
    result = build(effective)
    tokens = yield text_of(result)
    for _ in range(MAX_PACKS - 1):
        if tokens <= budget_tokens or effective <= 1:
            break
        effective = max(1, min(effective - 1, effective * budget_tokens // tokens - 1))
        result = build(effective)
        tokens = yield text_of(result)
    return result, tokens


def fit_by(
    count: Callable[[str], int], budget_tokens: int, build: Callable[[int], _T], text_of: Callable[[_T], str]
) -> tuple[_T, int]:
    """:func:`fitting` with a synchronous ``count`` (the estimate): the answer that fits and its count."""
    loop = fitting(budget_tokens, build, text_of)
    text = next(loop)
    while True:
        try:
            text = loop.send(count(text))
        except StopIteration as done:
            fitted: tuple[_T, int] = done.value  # the generator's return value
            return fitted
