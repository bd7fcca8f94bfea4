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

An answer that says whether it was counted by an estimate ("estimated") is fitted by
:func:`marked_fitting`: the same loop, with the mark inside every text it counts, so the
text it returns (:class:`Fitted`) is the one answer rendered once, mark and all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

__all__ = ["MAX_PACKS", "Fitted", "fit_by", "fitting", "marked_fitting"]

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


@dataclass(frozen=True, slots=True)
class Fitted(Generic[_T]):
    """An answer that fits: the answer, its text (the one counted), that count, and whether it was exact."""

    result: _T
    text: str
    tokens: int
    exact: bool


def marked_fitting(
    budget_tokens: int, build: Callable[[int, bool], _T], text_of: Callable[[_T], str], *, estimated: bool
) -> Generator[str, tuple[int, bool], Fitted[_T]]:
    """:func:`fitting` of an answer that says whether its count is an estimate.

    ``build(effective_budget, estimated)`` packs the answer with the mark or without it;
    each text is sent back its count and whether the count was exact. Packs start
    marked as ``estimated`` guesses (the counter knows whether it can count exactly now).
    A count that disagrees with the text's mark builds the same pack with the other mark
    and counts that text instead: a count that fell back to the estimate always marks it;
    an exact count of a marked text unmarks it, once per answer (marks cannot flip back
    and forth). So the text returned is the one counted, its mark inside: no mark is
    added or dropped after the count.
    """
    mark, unmarked_once = estimated, False
    room = budget_tokens
    latest: list[_T] = []

    def pack(effective: int) -> _T:
        nonlocal room
        room = effective
        latest[:] = [build(effective, mark)]
        return latest[0]

    loop = fitting(budget_tokens, pack, text_of)
    text = next(loop)
    while True:
        tokens, exact = yield text
        if exact == mark and (not exact or not unmarked_once):  # the text says the other thing
            unmarked_once = unmarked_once or exact
            mark = not exact
            latest[:] = [build(room, mark)]
            text = text_of(latest[0])
            continue
        try:
            text = loop.send(tokens)
        except StopIteration:
            return Fitted(latest[0], text, tokens, exact)
