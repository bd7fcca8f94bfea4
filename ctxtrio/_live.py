"""Settings measured while the server runs (the loaded model's context, token rates).

Config is frozen; what the calibration task learns later lives here, in one object
built by ``_app.py`` and passed down. Readers take a fresh look on every call.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._config import Config
from .text.tokens import TokenModel, TokenModelRef

__all__ = ["Live"]


@dataclass(slots=True)
class Live:
    """The current default budget and token model, and where each came from."""

    tokens: TokenModelRef
    budget_tokens: int
    budget_source: str
    context_length: int | None = None

    @classmethod
    def from_config(cls, config: Config) -> Live:
        if config.budget_tokens is not None:
            budget, source = config.budget_tokens, "set by --budget / CTX_BUDGET"
        else:
            budget, source = 4000, "default 4000 (no model context length detected yet)"
        return cls(TokenModelRef(TokenModel.cold(config.token_ratio)), budget, source)

    def set_context_length(self, tokens: int, *, explicit_budget: bool) -> None:
        """Record the loaded model's context; without an explicit budget, use half of it."""
        self.context_length = tokens
        if not explicit_budget and tokens >= 100:
            self.budget_tokens = max(50, tokens // 2)
            self.budget_source = f"half of the loaded model's {tokens}-token context"
