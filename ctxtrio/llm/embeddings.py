"""Embeddings from the user's own model server, for hybrid search (``--embed-model``).

An :class:`Embedder` wraps an :class:`~.client.LLMClient` opened on the embedding
endpoint (its own breaker: a missing embedding model must not stop summaries). It adds
what the model family asks of its inputs, and a short-lived cache of query vectors.

Prefixes, where the model family documents them (matched on the model name, lower case):

* nomic-embed-text: ``search_query: `` / ``search_document: `` (model card of
  nomic-ai/nomic-embed-text-v1.5, "Usage": task instruction prefixes are required);
* e5 (intfloat/e5-*, multilingual-e5-*): ``query: `` / ``passage: `` (model card, "FAQ");
* bge-*-en-v1.5, mxbai-embed-large and snowflake-arctic-embed: the query instruction
  ``Represent this sentence for searching relevant passages: `` and no document prefix
  (their model cards).

Others (all-MiniLM, gte, ...) take text as is.

Vectors are returned L2-normalised, so a dot product is the cosine similarity.
Each request is bounded by the client's ``embed_timeout_s`` (a batch of the background
embedder); a search wraps :meth:`Embedder.query` in its own, shorter ``move_on_after``.

A query comes before the backfill. The local servers answer one request at a time:
llama-cpp-python's server holds one lock around the model for every request
(llama_cpp/server/app.py, ``get_llama_proxy``: ``llama_outer_lock``/``llama_inner_lock``,
anyio Locks, so waiters go in order), llama-server runs one slot unless started with
``--parallel``, and a query sent while a background batch is computed waits for all of it.
A batch of 16 parts took seconds on a loaded CPU, past a search's 0.5 s, so 20-45% of
searches during a backfill went without meaning (stress/team_http.py). :meth:`Embedder.documents`
therefore sends its texts in requests sized to take about BATCH_S each, by the seconds per
character the server's own answers took so far (:class:`_Pace`), one text at least: a query
waits behind one such request at most (the client's limiter and the server's lock are both
first come, first served). The backfill pays more round trips; a request failing inside a
batch keeps the answers to that batch's earlier ones for the caller's retry, so no text is
embedded twice.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from .._errors import LLMError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .breaker import BreakerState
    from .client import LLMClient

__all__ = ["BATCH_S", "Embedder", "Prefixes", "normalized", "prefixes_for"]

#: How long one background request should take on the server: a query waits at most about this
#: long behind it (a search waits QUERY_S = 0.5 s for its vector, store/vector_task.py).
BATCH_S = 0.15
#: A request's texts before the server's pace is known (a probe, a short batch, go whole).
FIRST_TEXTS = 4
#: Vectors kept from a batch whose later request failed, for the caller's retry (a batch is 16 parts).
ANSWERED_KEPT = 64
#: Weight of the newest answer in the seconds-per-character estimate (the load on a shared CPU moves).
_PACE_WEIGHT = 0.3

_BGE_QUERY = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True, slots=True)
class Prefixes:
    """What goes before a query and before a document text for one model family."""

    query: str = ""
    document: str = ""


_FAMILIES: tuple[tuple[tuple[str, ...], Prefixes], ...] = (
    (("nomic-embed",), Prefixes("search_query: ", "search_document: ")),
    (("e5-", "e5_"), Prefixes("query: ", "passage: ")),
    (("bge-", "mxbai-embed", "snowflake-arctic-embed", "arctic-embed"), Prefixes(_BGE_QUERY, "")),
)


def prefixes_for(model: str) -> Prefixes:
    """The documented prefixes of ``model``'s family, or none."""
    name = model.lower()
    for needles, prefixes in _FAMILIES:
        if any(needle in name for needle in needles):
            return prefixes
    return Prefixes()


def normalized(vector: Sequence[float]) -> list[float]:
    """``vector`` scaled to length 1 (a zero vector stays zero)."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [0.0 for _ in vector]


@dataclass(slots=True)
class _Pace:
    """The server's seconds per input character, from its answers to background requests (None until one came)."""

    seconds_per_char: float | None = None

    def texts_within(self, texts: Sequence[str], seconds: float) -> int:
        """How many of ``texts``, from the first, one request should carry to take about ``seconds`` (one at least;
        FIRST_TEXTS until the pace is known: the first answer measures it)."""
        if self.seconds_per_char is None:
            return min(len(texts), FIRST_TEXTS)
        budget, taken = seconds / max(self.seconds_per_char, 1e-9), 0
        for count, text in enumerate(texts):
            taken += max(len(text), 1)
            if taken > budget:
                return max(count, 1)
        return len(texts)

    def answered(self, texts: Sequence[str], seconds: float) -> None:
        """A request of ``texts`` was answered in ``seconds``."""
        pace = seconds / max(sum(max(len(text), 1) for text in texts), 1)
        old = self.seconds_per_char
        self.seconds_per_char = pace if old is None else old + _PACE_WEIGHT * (pace - old)


class Embedder:
    """Documents and queries to vectors through one embedding endpoint.

    ``query_ttl_s``: how long a query's vector is reused (a model repeating a search,
    or paging through its hits, asks once); at most ``query_cache`` queries are kept.
    """

    def __init__(self, client: LLMClient, model: str, *, query_ttl_s: float = 300.0, query_cache: int = 256) -> None:
        self._client = client
        self.model = model
        self.prefixes = prefixes_for(model)
        self._ttl_s = query_ttl_s
        self._capacity = query_cache
        self._queries: OrderedDict[str, tuple[float, list[float]]] = OrderedDict()
        #: Background requests (documents) go one at a time, whoever sends them (chunks, session
        #: entries), so the endpoint serves one batch and a query; trio's lock is fair (FIFO).
        self._one_at_a_time = trio.Lock()
        self._pace = _Pace()
        #: Vectors of a batch's requests answered before a later request of it failed (a refused
        #: text among them): the caller sends the batch, or its parts, again, and these are not
        #: asked twice. Each is dropped once used; at most ANSWERED_KEPT, the oldest going first.
        self._answered: OrderedDict[str, list[float]] = OrderedDict()
        #: Vector length, learned from the first answer (None until then).
        self.dimension: int | None = None
        #: The last failure's message, None after a success.
        self.last_error: str | None = None

    @property
    def base_url(self) -> str:
        return self._client.settings.base_url

    @property
    def breaker_state(self) -> BreakerState:
        return self._client.breaker_state

    def document_input(self, text: str) -> str:
        """The exact input :meth:`documents` sends for ``text`` (what a stored vector is the vector of)."""
        return self.prefixes.document + text

    async def documents(self, texts: Sequence[str]) -> list[list[float]]:
        """The vectors of ``texts`` (with the family's document prefix); LLMError on failure (a refusal of
        any request: the caller sends fewer texts again).

        In requests of about BATCH_S each on the server (see the module docstring), each within the
        client's ``embed_timeout_s``; one such request at a time, whoever asks.
        """
        inputs = [self.document_input(text) for text in texts]
        async with self._one_at_a_time:
            todo = [text for text in dict.fromkeys(inputs) if text not in self._answered]
            while todo:
                request = todo[: self._pace.texts_within(todo, BATCH_S)]
                sent_at = trio.current_time()
                vectors = await self._embed(request)
                self._pace.answered(request, trio.current_time() - sent_at)
                self._answered.update(zip(request, vectors, strict=True))
                while len(self._answered) > ANSWERED_KEPT:
                    self._answered.popitem(last=False)
                todo = todo[len(request) :]
            found = {text: self._answered.pop(text) for text in dict.fromkeys(inputs)}
        return [found[text] for text in inputs]

    async def query(self, text: str) -> list[float]:
        """The vector of a search query (cached for ``query_ttl_s``); LLMError on failure.

        No deadline of its own: the search that asks sets one around it.
        """
        now = trio.current_time()
        cached = self._queries.get(text)
        if cached is not None and now - cached[0] < self._ttl_s:
            self._queries.move_to_end(text)
            return cached[1]
        (vector,) = await self._embed([self.prefixes.query + text])
        self._queries[text] = (trio.current_time(), vector)
        self._queries.move_to_end(text)
        while len(self._queries) > self._capacity:
            self._queries.popitem(last=False)
        return vector

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        try:
            raw = await self._client.embed(texts)
        except LLMError as exc:
            self.last_error = str(exc)
            raise
        self.last_error = None
        self.dimension = len(raw[0])
        return [normalized(vector) for vector in raw]
