"""Token counts for deciding what fits: exact from the server's tokenizer when it has one.

One :class:`TokenCounter` per process, built by ``_app.py`` and handed down through
``Live``. It answers two questions for everyone who fits text into a budget or a
window (packing, ingest chunk sizes, the summarizer's prompts):

* ``await counter.count(text)``: the exact token count of ``text`` in the loaded
  model's tokenizer when exact counting is available (one tokenize round trip, or none
  when cached), else the current estimate (``counter.model.estimate``, cheap);
* ``await counter.fit(budget, build, text_of)``: the final check of a packed answer.
  ``build(effective_budget)`` packs by the estimate (pure, cheap); its text is counted
  once; when it is over ``budget`` (the estimate was low), it is packed again with a
  budget shrunk by the overshoot, and counted again, at most :data:`_MAX_PACKS` times.
  Without a tokenizer the count is the estimate, so the answer fits under the estimate
  (what the model sees, headers and notes included, not only the packed parts).

``counter.kind`` says what the counts are: ``"exact"`` (the calibrator found a
tokenize endpoint for the loaded model), ``"calibrated"`` (rates measured by usage
slope: estimates), ``"cold-start"`` (nothing measured yet). Counts are cached per
(model, text): a model change means recounting, lazily.

A tokenize request that fails or takes longer than ``read_timeout_s`` falls back to the
estimate for that call (a read never waits on a hung server); the failure is logged.
Cancellation propagates.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Final, Literal, TypeVar

import trio

from .._errors import LLMError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..text.tokens import TokenModel, TokenModelRef
    from .client import LLMClient

__all__ = ["CountKind", "TokenCounter"]

logger = logging.getLogger(__name__)

CountKind = Literal["exact", "calibrated", "cold-start"]
_T = TypeVar("_T")
_MAX_PACKS: Final = 4
_CACHE_ENTRIES: Final = 4096


class TokenCounter:
    """Exact-when-possible token counts; see the module docstring. Safe to share between tasks."""

    def __init__(self, ref: TokenModelRef, client: LLMClient | None = None, *, read_timeout_s: float = 3.0) -> None:
        self._ref = ref
        self._client = client
        self._read_timeout_s = read_timeout_s
        self._model_id: str | None = None
        self._exact = False
        self._cache: OrderedDict[tuple[str, bytes], int] = OrderedDict()
        self.round_trips = 0  # tokenize requests sent for counting (not calibration)

    @property
    def model(self) -> TokenModel:
        """The current estimating model (cheap, pure; leans high)."""
        return self._ref.current

    @property
    def kind(self) -> CountKind:
        """Whether counts are exact, calibrated estimates or cold-start estimates."""
        if self._exact and self._client is not None:
            return "exact"
        return "cold-start" if self._model_id is None else "calibrated"

    def describe(self) -> str:
        """One line for context_status and context_guide."""
        if self.kind == "exact":
            return f"exact: the server's tokenizer counts every answer ({self._model_id}); {self.model.source}"
        if self.kind == "calibrated":
            return f"calibrated estimate (no tokenizer endpoint; leans high): {self.model.source}"
        return f"cold-start estimate (leans high; nothing measured yet): {self.model.source}"

    def set_model(self, model_id: str, *, exact: bool) -> None:
        """Called by the calibrator when it knows the loaded model and whether it can tokenize."""
        self._model_id = model_id
        self._exact = exact

    async def count(self, text: str) -> int:
        """The exact count of ``text`` when available (cached), else its estimate."""
        return (await self.counts([text]))[0]

    async def counts(self, texts: Sequence[str]) -> list[int]:
        """Counts of ``texts``: one tokenize request per text not yet cached, else estimates."""
        model = self._ref.current
        client, model_id = self._client, self._model_id
        if not self._exact or client is None or model_id is None:
            return [model.estimate(text) for text in texts]
        out: list[int] = []
        for text in texts:
            key = (model_id, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
            cached = self._cache.get(key)
            if cached is None:
                cached = await self._tokenize(client, text)
                if cached is None:
                    out.append(model.estimate(text))
                    continue
                self._cache[key] = cached
                if len(self._cache) > _CACHE_ENTRIES:
                    self._cache.popitem(last=False)
            else:
                self._cache.move_to_end(key)
            out.append(cached)
        return out

    async def _tokenize(self, client: LLMClient, text: str) -> int | None:
        if not text:
            return 0
        self.round_trips += 1
        try:
            with trio.move_on_after(self._read_timeout_s):
                return await client.tokenize(text, timeout_s=self._read_timeout_s)
        except LLMError as exc:
            logger.warning("exact token count failed (%s); using the estimate", exc)
            return None
        logger.warning("exact token count took over %g s; using the estimate", self._read_timeout_s)
        return None

    async def fit(self, budget_tokens: int, build: Callable[[int], _T], text_of: Callable[[_T], str]) -> tuple[_T, int]:
        """The largest ``build(effective)`` whose text counts at most ``budget_tokens``; and that count.

        ``build`` must return smaller answers for smaller budgets. If even the smallest
        answer it can give is over (one chunk cut to its minimum), that one is returned.
        """
        effective = budget_tokens
        result = build(effective)
        tokens = await self.count(text_of(result))
        for _ in range(_MAX_PACKS - 1):
            if tokens <= budget_tokens or effective <= 1:
                break
            effective = max(1, min(effective - 1, effective * budget_tokens // tokens - 1))
            result = build(effective)
            tokens = await self.count(text_of(result))
        return result, tokens
