"""Finding the chunks a search returns, for :meth:`DocumentService.search <.service.DocumentService.search>`.

The store's FTS5 index is asked for the best hits within the current generation of
each document; each hit's chunk is read alone from its journal line where the index
knows it, else from the loaded document (loaded concurrently). Hits of a document
replaced or forgotten meanwhile are dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._errors import NotFoundError
from .._limits import QUERY_CHARS, SEARCH_WORDS
from .._nursery import open_nursery
from ..text.terms import unique_terms
from .packing import Candidate

if TYPE_CHECKING:
    from ..store.rows import Hit
    from .catalog import DocEntry
    from .chunks import LoadedDoc
    from .repository import Repository

__all__ = ["find_candidates", "search_words"]

#: Extra rows asked of an unfiltered search, to make up for rows of obsolete generations.
_SLACK = 8


def search_words(query: str) -> tuple[list[str], bool]:
    """The terms a search of ``query`` uses, and whether words were left out."""
    found = unique_terms(query[:QUERY_CHARS])
    return found[:SEARCH_WORDS], len(found) > SEARCH_WORDS or len(query) > QUERY_CHARS


async def find_candidates(
    repo: Repository, query_terms: list[str], by_journal: dict[str, DocEntry], limit: int, *, all_docs: bool
) -> tuple[list[Candidate], bool]:
    """The chunks of the best ``limit`` hits in ``by_journal`` (journal -> current entry), and whether there were more.

    ``all_docs``: ``by_journal`` holds every current document (see :func:`_hits`).
    """
    hits = await _hits(repo, query_terms, by_journal, limit + 1, all_docs=all_docs)
    more = len(hits) > limit
    hits = hits[:limit]
    hits = [hit for hit in hits if hit.item.isdigit()]
    wanted = [(by_journal[hit.journal], int(hit.item), hit.line_start, hit.line_end) for hit in hits]
    found = await repo.chunks_at(wanted)
    missing = sorted({wanted[n][0].doc_id for n in range(len(wanted)) if n not in found})
    loaded = await _load_many(repo, missing) if missing else {}
    candidates: list[Candidate] = []
    for position, (entry, index, _, _) in enumerate(wanted):
        chunk = found.get(position)
        if chunk is None:
            doc = loaded.get(entry.doc_id)
            if doc is None or doc.gen != entry.gen or index >= len(doc.chunks):
                continue  # replaced or forgotten meanwhile
            chunk = doc.chunks[index]
        candidates.append(Candidate(entry.doc_id, entry.info.title, chunk, hits[position].score))
    return candidates, more


async def _hits(repo: Repository, query_terms: list[str], by_journal: dict[str, DocEntry], wanted: int, *, all_docs: bool) -> list[Hit]:
    """The best ``wanted`` hits within the current generations in ``by_journal``.

    Across all documents the index is asked without a journal filter (checking
    each match's journal in SQL costs as much as the match itself) and rows of
    obsolete generations, rare and short-lived, are dropped here; only if that
    leaves too few is it asked again with the filter.
    """
    store = repo.store
    if all_docs:
        hits = await store.search("chunks", query_terms, journals=None, limit=wanted + _SLACK)
        kept = [hit for hit in hits if hit.journal in by_journal]
        if len(kept) == len(hits) or len(kept) >= wanted:
            return kept[:wanted]
    hits = await store.search("chunks", query_terms, journals=list(by_journal), limit=wanted)
    return [hit for hit in hits if hit.journal in by_journal]


async def _load_many(repo: Repository, doc_ids: list[str]) -> dict[str, LoadedDoc]:
    """Load several documents concurrently (most are usually cached already)."""
    loaded: dict[str, LoadedDoc] = {}

    async def one(doc_id: str) -> None:
        try:
            _, loaded[doc_id] = await repo.load(doc_id)
        except NotFoundError:
            pass  # forgotten by another process since the search: its hits are dropped

    async with open_nursery() as nursery:
        for doc_id in doc_ids:
            nursery.start_soon(one, doc_id)
    return loaded
