"""Recall ranking: which live entries match a query, best first (pure, no trio).

A match's BM25 score (from the index, higher is better) is blended with its position in
the session, ``score × (1 + 0.25 × recency)``, recency in [0, 1] (the first entry 0, the
latest 1). With semantic recall, the first matches are fused with the entries nearest the
query in meaning (:func:`fuse_meaning`). Recent mode lists entries newest first
(:func:`recent_candidates`; a summary where the entries it folds were, :func:`place`). :mod:`.packing` takes these candidates, best first, into a budget.
"""

from __future__ import annotations

import heapq
from itertools import chain, islice
from typing import TYPE_CHECKING, Final

from ..text.embedding import CONFIDENT_HITS, coverage, fused_score
from .state.base import entry_key, entry_of
from .state.columns import Item, SessionState

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
    from collections.abc import Set as AbstractSet

__all__ = [
    "MEANING_DEPTH",
    "RECENCY_WEIGHT",
    "folded_match",
    "fuse_meaning",
    "place",
    "rank",
    "recent_candidates",
    "shown_in_recall",
    "tagged",
]

RECENCY_WEIGHT: Final = 0.25
#: With semantic recall: the entries nearest the query in meaning that are fused with BM25's
#: first FUSE_DEPTH matches (the rest of BM25's follow). No similarity floor: what counts as
#: near differs by model, and these are the nearest there are, named as found by meaning.
MEANING_DEPTH: Final = 10
_FUSE_DEPTH: Final = 30


def rank(
    state: SessionState, query_terms: Sequence[str], tags: AbstractSet[str], weights: Mapping[str, float] | None = None
) -> tuple[Iterator[Item], int]:
    """Live matches of ``query_terms`` best first (lazily), and how many count as matched.

    The order is BM25 blended with recency, ties to the newer entry. The count leaves
    out pins and, when ``tags`` are given, entries with none of them;
    :func:`pack_recall` skips those as it goes. Ranking is one pass over the matches
    and a heap: packing usually stops after a few dozen, so most are never sorted.
    ``weights``: the terms scored instead, each share weighted (query expansion, :mod:`.expansion`).
    """
    ranked, _, matched = _ranked(state, query_terms, tags, weights)
    return ranked, matched


def _ranked(
    state: SessionState, query_terms: Sequence[str], tags: AbstractSet[str], weights: Mapping[str, float] | None = None
) -> tuple[Iterator[Item], Collection[int], int]:
    """:func:`rank`'s answer, with the ordinals that matched."""
    scores = state.index.scores(query_terms if weights is None else weights, state.live, state.lengths, weights)
    step = RECENCY_WEIGHT / max(1, len(state) - 1)
    heap = [(-score * (1.0 + step * ordinal), -ordinal) for ordinal, score in scores.items()]
    heapq.heapify(heap)
    if tags:
        pinned, tagged = state.pinned, state.tags
        matched = sum(1 for o in scores if not pinned[o] and not tags.isdisjoint(tagged.get(o, ())))
    else:
        matched = len(scores) - sum(1 for pin in state.pin_set if pin in scores)
    return _drain(state, heap), scores.keys(), matched


def shown_in_recall(item: Item, tags: AbstractSet[str]) -> bool:
    """A match recall shows among its matches: not a pin (pins come first, whole), and carrying a tag asked for."""
    return not item.pinned and tagged(item, tags)


def tagged(item: Item, tags: AbstractSet[str]) -> bool:
    """Whether ``item`` carries one of ``tags`` (any item, when none is asked for): recall's tag filter."""
    return not tags or not tags.isdisjoint(item.tags)


def fuse_meaning(
    state: SessionState,
    query_terms: Sequence[str],
    tags: AbstractSet[str],
    near: Sequence[str],
    weights: Mapping[str, float] | None = None,
) -> tuple[Iterator[Item], int, frozenset[str]]:
    """:func:`rank`'s matches fused with ``near`` (entry keys nearest the query in meaning,
    best first; see ``memory/semantic.py``) by weighted reciprocal rank fusion, as
    doc_search fuses chunks (:func:`~ctxtrio.text.embedding.fused_score`, the query's
    keyword confidence from the first keyword matches): the first _FUSE_DEPTH matches and
    the live entries of ``near`` in fused order, keyword recall's best match first, then the
    other matches in :func:`rank`'s.

    Returns the candidates, how many count as matched (as :func:`rank` counts, plus
    the entries found only by meaning), and the ids of those found only by meaning.
    Keys whose entry is gone, retired, or holds another text are skipped. ``weights``: as :func:`rank`'s.
    """
    keyword, scores, matched = _ranked(state, query_terms, tags, weights)
    first = list(islice(keyword, _FUSE_DEPTH))
    by_word = {item.ordinal: place for place, item in enumerate(first, 1)}
    by_meaning: dict[int, int] = {}
    meaning_only: set[str] = set()
    for key in near:
        ordinal = state.ordinal_of(entry_of(key))
        if ordinal is None or ordinal in by_meaning:
            continue
        item = Item(state, ordinal)
        if not item.live or entry_key(item.id, item.text) != key:
            continue
        by_meaning[ordinal] = len(by_meaning) + 1
        if ordinal not in scores and shown_in_recall(item, tags):
            meaning_only.add(item.id)
    confidence = max((coverage(item.text, query_terms) for item in first[:CONFIDENT_HITS]), default=0.0)
    pool = list(by_word) + [ordinal for ordinal in by_meaning if ordinal not in by_word]
    pool.sort(key=lambda o: -fused_score(by_word.get(o), by_meaning.get(o), confidence))  # stable: words first
    # Keyword recall's best match (the first shown: not a pin, carrying a tag asked for) comes first. The
    # vector ranking weighs up to MEANING_BASE + MEANING_GAIN as the query's words match less, so a question
    # holding two thirds of its words in its note put the ten nearest in meaning all above the note BM25
    # ranked first: out of the first 10 ("How long did the semantic recall run spend embedding before its
    # first question?"). doc_search re-ranks a confident query's hits by their passages after fusion;
    # recall's fused order is final. Measured with all-MiniLM-L6-v2 over recall sets 1-9 (answers inside
    # 250 / 500 / 1,000 tokens, entry in the top 3): fused alone 293 / 350 / 386, 396; first 303 / 363 /
    # 405, 409; no lower than 2nd 295 / 355 / 397, 409 (keyword recall alone 295 / 342 / 366, 369).
    best = next((item for item in first if shown_in_recall(item, tags)), None)
    if best is not None and pool[0] != best.ordinal:
        pool.remove(best.ordinal)
        pool.insert(0, best.ordinal)
    rest = (item for item in keyword if item.ordinal not in by_meaning)
    fused = chain((Item(state, ordinal) for ordinal in pool), rest)
    return fused, matched + len(meaning_only), frozenset(meaning_only)


def folded_match(state: SessionState, query_terms: Sequence[str]) -> tuple[str, str] | None:
    """(entry id, summary id) of the folded entry holding the most of ``query_terms`` (the newest of
    equals), or None. A recall that matches nothing live names it: an extractive summary keeps some
    of its entries' lines, and one it left out is in the journal, out of recall until restored."""
    folded = bytearray(len(state))
    for ordinal in state.superseded_by:
        folded[ordinal] = not state.deleted_flags[ordinal] and not state.live[ordinal]
    held = state.index.holding(query_terms, folded)
    if not held:
        return None
    best = max(held, key=lambda ordinal: (held[ordinal], ordinal))
    return Item(state, best).id, Item(state, state.superseded_by[best]).id


def _drain(state: SessionState, heap: list[tuple[float, int]]) -> Iterator[Item]:
    pop = heapq.heappop
    while heap:
        yield Item(state, -pop(heap)[1])


def place(state: SessionState, item: Item) -> float:
    """Where ``item`` stands in the session's time: its place in the journal, but a summary's is just
    after the last entry it folds. It tells of those, not of the entries kept after them (a compaction
    keeps the latest): by its own id, the newest, its old material came last in a recall, where a model
    reads the latest state ("test run 1 failed" below "test run 12 passed")."""
    folded = [ordinal for ordinal in map(state.ordinal_of, item.folds) if ordinal is not None]
    return max(folded) + 0.5 if folded else float(item.ordinal)


def recent_candidates(state: SessionState, tags: AbstractSet[str]) -> Iterable[Item]:
    """Live unpinned entries, newest first by :func:`place` (lazily: packing stops early), so the
    window recent mode shows is the latest in time: a summary after the entries kept newer than it."""
    live, pinned, tagged, folds = state.live, state.pinned, state.tags, state.folds
    held: list[tuple[float, int]] = []  # summaries met before their place, as (-place, ordinal)
    for ordinal in range(len(state) - 1, -1, -1):
        while held and -held[0][0] > ordinal:
            yield Item(state, heapq.heappop(held)[1])
        if live[ordinal] and not pinned[ordinal] and (not tags or not tags.isdisjoint(tagged.get(ordinal, ()))):
            item = Item(state, ordinal)
            if ordinal in folds and (where := place(state, item)) < ordinal:
                heapq.heappush(held, (-where, ordinal))
                continue
            yield item
    while held:
        yield Item(state, heapq.heappop(held)[1])
