"""Token counts for deciding what fits: exact from the server's tokenizer when it has one.

One :class:`TokenCounter` per process, built by ``_wiring.py`` and handed down through
``Live``. It answers two questions for everyone who fits text into a budget or a
window (packing, ingest chunk sizes, the summarizer's prompts):

* ``await counter.count(text)``: the exact token count of ``text`` in the loaded
  model's tokenizer when exact counting is available (one tokenize round trip, or none
  when cached), else the current estimate (``counter.model.estimate``, cheap);
* ``await counter.fit(budget, build, text_of)``: the final check of a packed answer
  (``fit_marked`` for an answer that says when it was counted by the estimate).
  ``build(effective_budget)`` packs by the estimate (pure, cheap); its text is counted
  once; when it is over ``budget`` (the estimate was low), it is packed again with a
  budget shrunk by the overshoot, and counted again, at most :data:`~ctxtrio.text.fitting.MAX_PACKS` times
  (and the smallest answer once more when none of them fits).
  Without a tokenizer the count is the estimate, so the answer fits under the estimate
  (what the model sees, headers and notes included, not only the packed parts).

``counter.kind`` says what the counts are: ``"exact"`` (the calibrator found a
tokenize endpoint for the loaded model), ``"calibrated"`` (rates measured by usage
slope: estimates), ``"cold-start"`` (nothing measured yet). Counts are cached per
(model, text): a model change means recounting, lazily.

Counting never waits behind generation. All the counting of one answer (one ``fit``:
up to :data:`~ctxtrio.text.fitting.MAX_PACKS` counts) shares one deadline, ``read_timeout_s`` from its
start, so a tool call's counting costs at most that much on top of its packing. And
while one of our own chat streams is in flight or queued (a background summary), no
tokenize is sent at all: llama-cpp-python serves ``/extras/tokenize`` under the same
lock as generation (llama_cpp/server/app.py: ``tokenize`` depends on
``get_llama_proxy``), so the request would either wait for the whole generation
(``--interrupt_requests false``) or cut it off (the default, ``True``: the streaming
loop ends a stream as soon as another request holds ``llama_outer_lock``); llama.cpp's
``llama-server`` tokenizes beside a running slot, but our own limiter would still queue
the request behind the stream. The estimate then stands in: calibrated rates lifted
over every calibration sample plus the margin, or the cold rates, which lean high for
every tokenizer family measured. After a tokenize that fails or times out, counting
estimates for :data:`_COOL_OFF_S` before it asks the server again (a slow server is
not asked once per answer). Each fallback is logged, and :meth:`TokenCounter.describe`
(``context_guide``, ``context_status``) says "estimated" with the reason until the next
exact count. Cancellation propagates.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import OrderedDict
from typing import TYPE_CHECKING, Final, Literal, TypeVar

import trio

from .._errors import LLMError
from ..text.fitting import Fitted, marked_fitting

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..text.tokens import TokenModel, TokenModelRef
    from .client import LLMClient

__all__ = ["CountKind", "TokenCounter"]

logger = logging.getLogger(__name__)

CountKind = Literal["exact", "calibrated", "cold-start"]
_T = TypeVar("_T")
_CACHE_ENTRIES: Final = 4096
#: After a failed or timed-out tokenize, estimate for this long before asking again.
_COOL_OFF_S: Final = 30.0
_STREAMING: Final = "a summary is streaming from the same server, and a tokenize would wait for it or cut it off"


class TokenCounter:
    """Exact-when-possible token counts; see the module docstring. Safe to share between tasks."""

    def __init__(self, ref: TokenModelRef, client: LLMClient | None = None, *, read_timeout_s: float = 3.0) -> None:
        self._ref = ref
        self._client = client
        self._read_timeout_s = read_timeout_s
        self._model_id: str | None = None
        self._exact = False
        self._cache: OrderedDict[tuple[str, bytes], int] = OrderedDict()
        self._estimated: str | None = None  # why the latest count was an estimate (None: exact)
        self._quiet_until = -math.inf  # no tokenize before this time (after a failure)
        self.round_trips = 0  # tokenize requests sent for counting (not calibration)
        self.estimated = 0  # counts that fell back to the estimate although exact counting is on

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

    @property
    def estimating_now(self) -> str | None:
        """Why counts are estimates although the server can count; None if the next one would be exact.

        A count is estimated while one of our streams runs or a failure's cool-off holds,
        and the latest one may have been: either is reported (the guide never says
        "exact" for a count that could not be made in time).
        """
        if self.kind != "exact":
            return None
        if self._client is not None and self._client.streaming:
            return _STREAMING
        return self._estimated

    def describe(self) -> str:
        """One line for context_status and context_guide."""
        if (reason := self.estimating_now) is not None:
            return (
                f"estimated (leans high) now: {reason}; counted by the server's tokenizer "
                f"({self._model_id}) again when it is free; {self.model.source}"
            )
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
        """Counts of ``texts``: one tokenize request per text not yet cached, else estimates.

        Tokenize requests stop ``read_timeout_s`` from now; texts not counted by then are
        estimated.
        """
        return [tokens for tokens, _ in await self._counted(texts, None)]

    async def _counted(self, texts: Sequence[str], deadline: float | None) -> list[tuple[int, bool]]:
        """(count, whether it is exact) for each of ``texts``.

        Tokenize requests stop at ``deadline`` (the one of a whole ``fit``; None:
        ``read_timeout_s`` from now).
        """
        model = self._ref.current
        client, model_id = self._client, self._model_id
        if not self._exact or client is None or model_id is None:
            return [(model.estimate(text), False) for text in texts]
        deadline = trio.current_time() + self._read_timeout_s if deadline is None else deadline
        out: list[tuple[int, bool]] = []
        for text in texts:
            key = (model_id, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
            cached = self._cache.get(key)
            if cached is None:
                cached = await self._tokenize(client, text, deadline)
                if cached is None:
                    out.append((model.estimate(text), False))
                    continue
                self._cache[key] = cached
                if len(self._cache) > _CACHE_ENTRIES:
                    self._cache.popitem(last=False)
            else:
                self._cache.move_to_end(key)
            self._estimated = None
            out.append((cached, True))
        return out

    def _fall_back(self, reason: str) -> None:
        if self._estimated != reason:
            logger.warning("token count estimated: %s", reason)
        self._estimated = reason
        self.estimated += 1

    async def _tokenize(self, client: LLMClient, text: str, deadline: float) -> int | None:
        if not text:
            return 0
        now = trio.current_time()
        if client.streaming:
            self._fall_back(_STREAMING)
            return None
        if now < self._quiet_until:  # the reason given at the failure still stands
            self.estimated += 1
            return None
        if now >= deadline:
            self._fall_back(f"counting this answer took over {self._read_timeout_s:g} s")
            return None
        self.round_trips += 1
        try:
            with trio.move_on_at(deadline):
                return await client.tokenize(text)
        except LLMError as exc:
            self._quiet_until = trio.current_time() + _COOL_OFF_S
            self._fall_back(f"the tokenize request failed ({type(exc).__name__})")
            return None
        self._quiet_until = trio.current_time() + _COOL_OFF_S
        self._fall_back(f"the tokenizer did not answer within {self._read_timeout_s:g} s")
        return None

    async def fit(self, budget_tokens: int, build: Callable[[int], _T], text_of: Callable[[_T], str]) -> tuple[_T, int]:
        """The largest ``build(effective)`` whose text counts at most ``budget_tokens``; and that count.

        ``build`` must return smaller answers for smaller budgets. If even the smallest
        answer it can give is over (one chunk cut to its minimum), that one is returned.
        """
        fitted = await self.fit_marked(budget_tokens, lambda room, _: build(room), text_of)
        return fitted.result, fitted.tokens

    async def fit_marked(
        self, budget_tokens: int, build: Callable[[int, bool], _T], text_of: Callable[[_T], str], *, grow: bool = False
    ) -> Fitted[_T]:
        """As :meth:`fit`, for an answer that says "estimated" when its count was not exact
        (:func:`~ctxtrio.text.fitting.marked_fitting`): its text is the one counted, mark included."""
        deadline = trio.current_time() + self._read_timeout_s  # all the counting of one answer
        guess = self.kind != "exact" or self.estimating_now is not None
        loop = marked_fitting(budget_tokens, build, text_of, estimated=guess, grow=grow)
        text = next(loop)
        while True:
            counted = (await self._counted([text], deadline))[0]
            try:
                text = loop.send(counted)
            except StopIteration as done:
                fitted: Fitted[_T] = done.value  # the loop's return value
                return fitted
