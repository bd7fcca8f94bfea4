"""Settings measured while the server runs (the loaded model's context, token rates).

Config is frozen; what the calibration task learns later lives here, in one object
built by ``_wiring.py`` and passed down. Readers take a fresh look on every call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from .text.fitting import Fitted, fit_by, marked_fitting
from .text.tokens import COLD_SOURCE, TokenModel, TokenModelRef

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ._config import Config

_T = TypeVar("_T")
CountKind = Literal["exact", "calibrated", "cold-start"]


class TokenCounting(Protocol):
    """What fits text into a budget or a window needs (``ctxtrio.llm.counting.TokenCounter``).

    ``count``/``counts`` are exact in the loaded model's tokenizer when ``kind`` is
    ``"exact"``, else estimates; ``fit`` is the final check of a packed answer.
    """

    @property
    def kind(self) -> CountKind: ...

    @property
    def model(self) -> TokenModel: ...

    @property
    def estimating_now(self) -> str | None:
        """Why counts are estimates right now although the server can count (None: exact, or never exact)."""
        ...

    def describe(self) -> str: ...

    async def count(self, text: str) -> int: ...

    async def counts(self, texts: Sequence[str]) -> list[int]: ...

    async def fit(
        self, budget_tokens: int, build: Callable[[int], _T], text_of: Callable[[_T], str]
    ) -> tuple[_T, int]: ...

    async def fit_marked(
        self, budget_tokens: int, build: Callable[[int, bool], _T], text_of: Callable[[_T], str], *, grow: bool = False
    ) -> Fitted[_T]:
        """As ``fit``, for an answer built with or without its "estimated" mark (``build(room, estimated)``):
        the answer, its text as counted (mark inside), the count, and whether it was exact. ``grow``: an
        answer counted well under the budget is packed again larger (:func:`~.text.fitting.fitting`)."""
        ...


class EstimateCounter:
    """Counts by the current estimate only (no LLM configured, or before ``_wiring`` wires one)."""

    def __init__(self, ref: TokenModelRef) -> None:
        self._ref = ref

    @property
    def kind(self) -> CountKind:
        return "cold-start" if self._ref.current.source.startswith(COLD_SOURCE) else "calibrated"

    @property
    def model(self) -> TokenModel:
        return self._ref.current

    @property
    def estimating_now(self) -> str | None:
        return None

    def describe(self) -> str:
        return f"{self.kind} estimate (leans high; no tokenizer): {self._ref.current.source}"

    async def count(self, text: str) -> int:
        return self._ref.current.estimate(text)

    async def counts(self, texts: Sequence[str]) -> list[int]:
        return [self._ref.current.estimate(text) for text in texts]

    async def fit_marked(
        self, budget_tokens: int, build: Callable[[int, bool], _T], text_of: Callable[[_T], str], *, grow: bool = False
    ) -> Fitted[_T]:
        """As ``fit``, marked: every count is the estimate."""
        loop = marked_fitting(budget_tokens, build, text_of, estimated=True, grow=grow)
        text = next(loop)
        while True:
            try:
                text = loop.send((self._ref.current.estimate(text), False))
            except StopIteration as done:
                fitted: Fitted[_T] = done.value  # the generator's return value
                return fitted

    async def fit(self, budget_tokens: int, build: Callable[[int], _T], text_of: Callable[[_T], str]) -> tuple[_T, int]:
        """As TokenCounter.fit, by the estimate: the rendered answer fits under the estimate."""
        return fit_by(self._ref.current.estimate, budget_tokens, build, text_of)


__all__ = ["CountKind", "EstimateCounter", "Live", "TokenCounting"]


@dataclass(slots=True)
class Live:
    """The current default budget and token model, and where each came from.

    ``counter`` counts exactly when the loaded model's server can tokenize (see
    :mod:`ctxtrio.llm.counting`); ``context_length`` is the detected window (None until
    a server tells it; llama-cpp-python tells it only through its overflow error).
    """

    tokens: TokenModelRef
    budget_tokens: int
    budget_source: str
    context_length: int | None = None
    counter: TokenCounting = field(init=False)

    def __post_init__(self) -> None:
        self.counter = EstimateCounter(self.tokens)

    @classmethod
    def from_config(cls, config: Config) -> Live:
        if config.budget_tokens is not None:
            budget, source = config.budget_tokens, "set by --budget / CTX_BUDGET"
        else:
            # Not "default 4000": the guide shows the number beside it ("4000 tokens (default 4000 (...))").
            budget, source = 4000, "built-in default, no model context length detected yet"
        return cls(TokenModelRef(TokenModel.cold(config.token_ratio)), budget, source)

    def set_context_length(self, tokens: int, *, explicit_budget: bool) -> None:
        """Record the loaded model's context; without an explicit budget, use half of it."""
        self.context_length = tokens
        if not explicit_budget and tokens >= 100:
            self.budget_tokens = max(50, tokens // 2)
            self.budget_source = f"half of the loaded model's {tokens}-token context"
