"""Searching documents: :class:`SearchingMethods`, the search of :class:`~.service.DocumentService`.

A search checks its query, asks :mod:`.search` for the candidate chunks (BM25 over the
FTS5 index, fused with the vector ranking under ``--embed-model``), re-ranks them by their
best passage, and packs the passages into the budget (:func:`~.packing.pack_hits`), the
final fit in the model's own tokens where the server can count.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

import trio

from .._errors import InputError
from .._limits import SEARCH_LIMIT, check_budget, check_range
from ..store.ids import validate_id
from ..text.neighbours import alike_of, counted_first
from ..text.words import rarity_weights
from .continuation import entry_starts_first, with_continuation
from .defined import DefinitionOrder
from .hybrid import FUSE_DEPTH
from .model import SearchHit, SearchResult
from .packing import least_hit_tokens, pack_hits
from .render import render_search, search_head, search_too_small
from .search import find_candidates, load_tables, rerank_fused, search_words

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .._config import Config
    from .._live import Live
    from .catalog import DocEntry
    from .embedding import SemanticIndex
    from .repository import Repository

__all__ = ["SearchingMethods"]


class SearchingMethods:
    """Keyword (and meaning) search over the stored documents: a method of
    :class:`~ctxtrio.docs.service.DocumentService`."""

    _live: Live
    _config: Config
    _repo: Repository
    semantic: SemanticIndex | None

    async def search(
        self, query: str, *, doc_id: str | None = None, budget_tokens: int | None = None, limit: int = 10
    ) -> SearchResult:
        """The best-matching chunks of one document or all, re-ranked by their best passage
        (:func:`~.ranking.rerank`), packed into the budget as passages (:func:`~.packing.pack_hits`)."""
        budget = check_budget(budget_tokens, self._live.budget_tokens)
        check_range("limit", limit, SEARCH_LIMIT)
        if doc_id is not None:
            validate_id(doc_id, "doc_id")
        if not query.strip():
            raise InputError("query is empty: give the distinctive words to look for")
        query_terms, left_out = search_words(query)
        if not query_terms:
            raise InputError(
                "query has no searchable words (only punctuation or common stopwords); use distinctive words"
            )
        await self._repo.refresh()
        by_journal: Mapping[str, DocEntry]
        if doc_id is not None:
            entry = self._repo.entry(doc_id)
            by_journal = {self._repo.journal(entry): entry}
        else:
            by_journal = self._repo.current_journals()
        if not by_journal:
            nothing = SearchResult(query, (), 0, False, budget, 0, left_out)
            return replace(nothing, rendered=render_search(nothing))
        semantic = self.semantic
        meaning = None
        if semantic is not None:
            journals = None if doc_id is None else list(by_journal)
            meaning = partial(semantic.nearest, query, journals, max(limit + 1, FUSE_DEPTH))
        expand_words = self._config.query_expansion
        # The plain words' other forms and thesaurus words are counted with the terms: one trip to the index, not two.
        if expand_words:
            await load_tables()
        rows, counted = await _counts_of(
            self._repo, query_terms, counted_first(query, query_terms) if expand_words else ()
        )
        found = await find_candidates(
            self._repo,
            query_terms,
            by_journal,
            limit,
            all_docs=doc_id is None,
            meaning=meaning,
            query=query,
            expand_words=expand_words,
            counts=counted,
            rows=rows,
        )
        more, skipped = found.more, found.semantic_skipped
        # The thesaurus's words the search looked for, for the passages (a share of their word's).
        alike = alike_of(found.words)
        candidates = found.candidates
        if found.by_words:  # a paraphrase keeps the order semantic recall gave it (docs/hybrid.py)
            candidates = await trio.to_thread.run_sync(partial(rerank_fused, candidates, query_terms, alike, query))
            order = found.definitions or DefinitionOrder(query_terms, query)  # its texts already read
            candidates = order.first(candidates)  # find_candidates put them first before
        # the pool re-ranked (search.pool), cut to limit; an entry's start comes above its continuation, and
        # a definition cut by its chunk's end brings the next chunk
        candidates = entry_starts_first(candidates, query_terms)
        candidates = await with_continuation(self._repo, candidates, query_terms, query, limit, by_journal)
        also = {word: counted.get(word, 0) for _, words in alike for word in words}
        rarity = rarity_weights({term: counted.get(term, 0) for term in query_terms}, rows, also)
        model = self._live.tokens.current
        # The head line's cost at its longest (every clause, large numbers), kept out of the hits' room.
        widest = SearchResult(
            query, (SearchHit("", "", 0, (), 0.0, "", 0, cut=True),), 99, more, budget, budget, left_out, skipped, True
        )
        head_tokens = model.estimate(search_head(widest)) + 1

        def build(room: int, estimated: bool) -> SearchResult:
            packed, omitted, used = pack_hits(
                candidates, max(1, room - head_tokens), model, query_terms, rarity, alike, worded=found.by_words
            )
            marked = estimated and bool(packed)
            if not estimated:  # grown past the budget by a tokenizer counting less: say no more than it holds
                used = min(used, max(1, budget - head_tokens))
            return SearchResult(query, tuple(packed), omitted, more, budget, used, left_out, skipped, marked)

        # The final check, in the model's own tokens when the server can count; the text
        # counted, its "estimated" mark inside, is the answer. An answer counted well under
        # the budget is packed again larger (grow: the parts' rounded-up sums, the widest head).
        fitted = await self._live.counter.fit_marked(budget, build, render_search, grow=True)
        if candidates and (fitted.tokens > budget or not fitted.result.hits):  # the head left a hit no room
            raise InputError(
                search_too_small(budget, head_tokens + least_hit_tokens(candidates[0], model, query_terms))
            )
        return replace(fitted.result, rendered=fitted.text)


async def _counts_of(repo: Repository, query_terms: list[str], also: Sequence[str] = ()) -> tuple[int, dict[str, int]]:
    """The current chunks, and how many rows hold each of the query's terms and of the words
    ``also`` names, once the index holds every acknowledged append (the search waits for that
    too): for the words a search leaves out of its last level (:func:`~ctxtrio.store.rows.fts_levels`),
    the forms it searches for too (:func:`~ctxtrio.text.neighbours.expand`) and how rare each
    term is (:func:`~ctxtrio.text.passages.rarity_weights`)."""
    await repo.store.index_settled()
    rows = repo.current_chunks()
    return rows, await repo.store.doc_counts("chunks", [*query_terms, *also])
