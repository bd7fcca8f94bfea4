"""Finding the chunks a search returns, for :meth:`DocumentService.search <.service.DocumentService.search>`.

The store's FTS5 index is asked for the best hits within the current generation of
each document; each hit's chunk is read alone from its journal line where the index
knows it, else from the loaded document (loaded concurrently). Hits of a document
replaced or forgotten meanwhile are dropped (:mod:`.hits`).

With semantic recall (``--embed-model``), the vector ranking is asked at the same time
as BM25. The chunks read are the best by reciprocal rank fusion (:func:`~.hybrid.fuse`)
and the first ``limit + 1`` of each ranking; :func:`~.hybrid.hybrid_order` orders them, weighing each ranking by how
well the query's words match, and decides which hits show their part found by meaning.
A hit that is not among the keyword hits is marked ``by_meaning``; chunks not embedded
yet still compete through BM25.

A query of a few words that spell an identifier (``json decode error``) also asks the
index for the identifier whole (``jsondecodeerror``, :mod:`.definition_rows`); chunks that *define* it
(:func:`~ctxtrio.text.definitions.defines`) come first (:func:`~.defined.definitions_first`, also
after any re-ranking), so a function or class asked for by its words brings its
definition before the chunks that use it most.

A plain English word of the query also searches for its other forms that the corpus says
more, for the documentation's words for it in a programming thesaurus (:mod:`ctxtrio.text.thesaurus`),
and, when the corpus seldom says it, for its neighbours in meaning that the corpus says
more, where the search comes down to rows holding any of the query's words
(:mod:`ctxtrio.text.neighbours`; ``--no-query-expansion`` turns all three off).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from .._limits import QUERY_CHARS, SEARCH_WORDS
from .._nursery import open_nursery
from ..store.rows import MAX_LEVEL_WORDS
from ..text import neighbours
from ..text.asked import asked_keywords
from ..text.neighbours import SearchWord, expand, wanted
from ..text.query import query_terms, without_prefixes
from .defined import DefinitionOrder, kept_where
from .definition_rows import members_asked, members_read, named_hits
from .hits import hits_within, read_fused
from .hybrid import FUSE_DEPTH, Fused, by_words, fuse, hybrid_order, meaning_first_floor
from .packing import Candidate
from .ranking import rerank

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from ..store.rows import Hit
    from ..text.words import Alike
    from .catalog import DocEntry
    from .embedding import SemanticHits
    from .repository import Repository

__all__ = [
    "POOL_DEPTH",
    "Found",
    "Fused",
    "above_mean",
    "find_candidates",
    "load_tables",
    "pool",
    "rerank_fused",
    "search_words",
]

#: Rows a keyword search alone reads; those past the first ``limit + 1`` join the re-ranking only
#: when BM25 scores them above the mean of the first ``limit`` (:func:`above_mean`) or, among the
#: next ``(limit + 1) // 2``, they are of a document one of the first ``limit + 1`` is of (:func:`pool`).
POOL_DEPTH = 30


@dataclass(frozen=True, slots=True)
class Found:
    """What a search found before packing."""

    candidates: list[Candidate]
    #: More chunks matched beyond the limit.
    more: bool
    #: Why semantic recall did not take part, when it was asked and could not.
    semantic_skipped: str | None = None
    #: Whether the candidates are ordered by keyword search (alone, or with the query's
    #: words well matched): then passages may re-rank them (see :func:`rerank_fused`).
    by_words: bool = True
    #: The words searched for: the query's, grouped with their other forms and the words
    #: expansion gave them (:func:`_expanded`), or the query's own without expansion.
    words: tuple[SearchWord, ...] = ()
    #: How the candidates were put in order of the name the query asks for: again after re-ranking.
    definitions: DefinitionOrder | None = None


def rerank_fused(
    candidates: Sequence[Candidate], query_terms: Sequence[str], alike: Alike = (), query: str = ""
) -> list[Candidate]:
    """Keyword hits re-ranked by their best passage (:func:`~.ranking.rerank`, ``alike`` and ``query`` its) within the
    places fusion gave them; hits found by meaning keep theirs (their score is a
    similarity, which does not add to BM25), and so does a hit ``placed`` by it (:func:`~.hybrid.hybrid_order`);
    the vector ranking's first comes no lower than :data:`~.hybrid.MEANING_FIRST_FLOOR` when it is marked
    ``meaning_first`` (:func:`~.hybrid.meaning_first_floor`). Without semantic recall, :func:`rerank` itself."""
    kept = [c.by_meaning or c.placed for c in candidates]
    keyword = iter(
        rerank([c for c, keep in zip(candidates, kept, strict=True) if not keep], query_terms, alike=alike, query=query)
    )
    return meaning_first_floor([c if keep else next(keyword) for c, keep in zip(candidates, kept, strict=True)])


def search_words(query: str) -> tuple[list[str], bool]:
    """The terms a search of ``query`` uses, and whether words were left out. Past :data:`MAX_LEVEL_WORDS` terms
    (then the search goes from all words to any), without a hyphenated word's prefix (:func:`without_prefixes`)."""
    found = query_terms(query[:QUERY_CHARS])
    if len(found) > MAX_LEVEL_WORDS:
        found = without_prefixes(query[:QUERY_CHARS], found)
    return found[:SEARCH_WORDS], len(found) > SEARCH_WORDS or len(query) > QUERY_CHARS


async def find_candidates(
    repo: Repository,
    query_terms: list[str],
    by_journal: Mapping[str, DocEntry],
    limit: int,
    *,
    all_docs: bool,
    meaning: Callable[[], Awaitable[SemanticHits]] | None = None,
    query: str = "",
    expand_words: bool = True,
    counts: Mapping[str, int],
    rows: int,
) -> Found:
    """The chunks of the best ``limit`` hits in ``by_journal`` (journal -> current entry), and whether there were more;
    by keyword search alone, also those of the rows after them that :func:`pool` keeps (the
    caller re-ranks all and keeps ``limit``). A query that asks for a name (:func:`~ctxtrio.text.asked.asked_name`)
    also brings the chunks that define it: found by the name alone when the query spells it in parts or
    qualified; else, by keyword search alone, those among the rows the pool looks at (to the 16th of a
    search of 10, the 11th included: it only told that there were more): ``breakpoint()``'s entry in
    library.functions, the 11th row, under bdb's chunks that name Breakpoint more.

    ``all_docs``: ``by_journal`` holds every current document (see :func:`~.hits.hits_within`).
    ``meaning``: the vector ranking, asked while BM25 runs and fused with it.
    ``query``: as written, for the dotted name it may hold (:func:`~ctxtrio.text.asked.asked_name`)
    and the plain words that may search with their neighbours (``expand_words``, :func:`_expanded`).
    ``counts``: how many rows hold each of ``query_terms`` (and any other word counted with them, such as
    their other forms), of ``rows`` current chunks, counted once the index settled: for the plain words
    that expand and the words at least half of the rows hold, which the last level leaves out
    (:func:`~ctxtrio.store.rows.fts_levels`).
    """
    common = frozenset(term for term, held in counts.items() if 2 * held >= rows > 0)
    skipped: str | None = None
    hybrid = False  # both rankings answered: read more, order by hybrid_order
    words = await _expanded(repo, query, query_terms, counts, rows) if expand_words else list(query_terms)
    pooled: list[Fused] = []  # rows past the first limit + 1 that join the re-ranking (keyword search alone)
    if meaning is None:
        hits = await hits_within(repo, words, by_journal, max(limit + 1, POOL_DEPTH), all_docs=all_docs, common=common)
        ranked = [Fused(hit) for hit in hits[: limit + 1]]
        pooled = [Fused(hit) for hit in pool(hits, limit)]
    else:
        asked: list[SemanticHits] = []

        async def ask() -> None:
            asked.append(await meaning())

        async with open_nursery() as nursery:
            nursery.start_soon(ask)
            keyword = await hits_within(
                repo, words, by_journal, max(limit + 1, FUSE_DEPTH), all_docs=all_docs, common=common
            )
        near = [hit for hit in asked[0].hits if hit.journal in by_journal]
        skipped = asked[0].skipped
        hybrid = bool(near)
        # Both: every one of the first limit + 1 of each ranking is read, and hybrid_order orders them.
        ranked = fuse(keyword, near, 2 * limit, each=limit + 1) if hybrid else fuse(keyword, near, limit + 1)
    more = len(ranked) > limit
    ranked = ranked if hybrid else ranked[:limit] + pooled
    order = DefinitionOrder(query_terms, query)  # each candidate's text read once for the name it asks for
    name = order.name
    checked: set[tuple[str, int]] = set()  # rows read only for the definition of ``name`` they may hold
    if name is not None and (name.identifier not in query_terms or name.qualifier is not None):
        seen = {(one.hit.journal, one.hit.item) for one in ranked}
        named = await named_hits(repo, name, by_journal, all_docs=all_docs)
        ranked += [Fused(hit) for hit in named if (hit.journal, hit.item) not in seen]
    elif name is not None and meaning is None:  # the query's own word: its rows are those searched
        seen = {(one.hit.journal, one.hit.item) for one in ranked}
        extra = [hit for hit in hits[limit : _pool_depth(limit)] if (hit.journal, hit.item) not in seen]
        checked = {(by_journal[hit.journal].doc_id, int(hit.item)) for hit in extra if hit.item.isdigit()}
        ranked += [Fused(hit) for hit in extra]
    ranked = [one for one in ranked if one.hit.item.isdigit()]
    candidates, ranks = await read_fused(repo, by_journal, ranked)
    if checked and name is not None:
        candidates, ranks = kept_where(order.defines, checked, candidates, ranks)
    members = members_asked(order, query_terms, query, candidates)
    if members:  # no row read defines the name whole, or a question writes names: the members its words spell
        kinds = asked_keywords(query)
        late, late_ranks = await members_read(repo, members, by_journal, ranked, all_docs=all_docs, kinds=kinds)
        candidates, ranks = candidates + late, ranks + late_ranks
    worded = True
    if hybrid:
        worded = by_words(candidates, ranks, query_terms)
        candidates = hybrid_order(candidates, ranks, query_terms)
    if name is not None or members:
        candidates = order.first(candidates)
    return Found(candidates[: limit + len(pooled)], more, skipped, worded, tuple(words), order)


def pool(hits: Sequence[Hit], limit: int) -> list[Hit]:
    """The hits after the first ``limit + 1`` that join the re-ranking, in order: those
    :func:`above_mean` keeps, and those of the next ``(limit + 1) // 2`` rows (to the 16th of
    a search of 10) that are of a document one of the first ``limit + 1`` is of.

    Why a found document's next chunks: BM25 ranks first the chunks of a page that repeat the
    query's words most (``pg_dump`` on every line of its Description), not the one that answers
    (its ``--if-exists`` entry, the 13th row for "pg_dump --if-exists"); the passage and heading
    scores of :func:`~.ranking.rerank` tell them apart only if both are re-ranked. Deeper rows
    of a found document added no answer in the bench's sets (rows to the 20th or 22nd: one
    fewer, python3.11-doc) and cost a passage score each."""
    above = {id(hit) for hit in above_mean(hits, limit)}
    found = {hit.journal for hit in hits[: limit + 1]}
    near = _pool_depth(limit)
    return [
        hit
        for n, hit in enumerate(hits[limit + 1 :], limit + 1)
        if id(hit) in above or (n < near and hit.journal in found)
    ]


def _pool_depth(limit: int) -> int:
    """How many rows :func:`pool` looks at for a found document's chunks: ``limit + 1`` and half as many again."""
    return limit + 1 + (limit + 1) // 2


def above_mean(hits: Sequence[Hit], limit: int) -> list[Hit]:
    """The hits after the first ``limit + 1`` whose BM25 is above the mean of the first ``limit``'s.
    The index's levels put rows holding more of the query's words first, whatever their BM25
    (:func:`~ctxtrio.store.rows.fts_levels`); a row of a lower level that BM25 scores above most of
    those is as good a candidate for re-ranking as they are."""
    first = hits[:limit]
    if len(hits) <= limit + 1 or not first:
        return []
    mean = sum(hit.score for hit in first) / len(first)
    return [hit for hit in hits[limit + 1 :] if hit.score > mean]


async def _expanded(
    repo: Repository, query: str, query_terms: list[str], held: Mapping[str, int], rows: int
) -> list[SearchWord]:
    """The query's words, a plain word grouped with its other forms the corpus says more, the
    thesaurus's words for it the corpus says more and, when the corpus seldom says it, its
    neighbours the corpus says more
    (:func:`~ctxtrio.text.neighbours.expand`; the counts are over every current document, as
    BM25's are). ``held``: the counts of ``query_terms`` and, as the service takes them, of their
    other forms, taken once every acknowledged append is indexed (else a search just after an
    ingest would expand by a part of the index); only the other words' are asked here."""
    await load_tables()
    counts = dict(held)
    more = wanted(query, query_terms, counts, rows)
    if more:
        counts |= await repo.store.doc_counts("chunks", more)
    return expand(query, query_terms, counts, rows)


async def load_tables() -> None:
    """Read the tables query expansion uses (:func:`~ctxtrio.text.neighbours.load_tables`), once a
    process, in a thread, not on the event loop."""
    if not neighbours.tables_loaded():
        await trio.to_thread.run_sync(neighbours.load_tables)
