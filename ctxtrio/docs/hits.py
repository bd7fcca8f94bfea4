"""The index's hits within the current generation of each document, and their chunks (for :mod:`.search`).

:func:`hits_within` asks the store's FTS5 index for the best rows of the documents a search covers and drops
the rows of generations replaced meanwhile; :func:`read_fused` reads each ranked row's chunk alone from its
journal line where the index knows it, else from the loaded document (loaded concurrently), leaving out those
of documents replaced or forgotten meanwhile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._errors import NotFoundError
from .._nursery import open_nursery
from .packing import Candidate

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from ..store.rows import Hit
    from ..text.neighbours import SearchWord
    from .catalog import DocEntry
    from .chunks import LoadedDoc
    from .hybrid import Fused, Ranks
    from .repository import Repository

__all__ = ["hits_within", "read_fused"]

#: Extra rows asked of an unfiltered search, to make up for rows of obsolete generations.
_SLACK = 8


async def hits_within(
    repo: Repository,
    query_terms: Sequence[SearchWord],
    by_journal: Mapping[str, DocEntry],
    wanted: int,
    *,
    all_docs: bool,
    common: Collection[str] = (),
) -> list[Hit]:
    """The best ``wanted`` hits within the current generations in ``by_journal``.

    Across all documents the index is asked without a journal filter (checking
    each match's journal in SQL costs as much as the match itself) and rows of
    obsolete generations, rare and short-lived, are dropped here; only if that
    leaves too few is it asked again with the filter.
    """
    store = repo.store
    if all_docs:
        hits = await store.search("chunks", query_terms, journals=None, limit=wanted + _SLACK, common=common)
        kept = [hit for hit in hits if hit.journal in by_journal]
        if len(kept) == len(hits) or len(kept) >= wanted:
            return kept[:wanted]
    hits = await store.search("chunks", query_terms, journals=list(by_journal), limit=wanted, common=common)
    return [hit for hit in hits if hit.journal in by_journal]


async def read_fused(
    repo: Repository, by_journal: Mapping[str, DocEntry], ranked: list[Fused]
) -> tuple[list[Candidate], list[Ranks]]:
    """The chunks of ``ranked`` (those of documents replaced or forgotten meanwhile left
    out), each with its places in the rankings."""
    wanted = [(by_journal[one.hit.journal], int(one.hit.item), one.hit.line_start, one.hit.line_end) for one in ranked]
    found = await repo.chunks_at(wanted)
    missing = sorted({wanted[n][0].doc_id for n in range(len(wanted)) if n not in found})
    loaded = await _load_many(repo, missing) if missing else {}
    candidates: list[Candidate] = []
    ranks: list[Ranks] = []
    for position, (entry, index, _, _) in enumerate(wanted):
        chunk = found.get(position)
        if chunk is None:
            doc = loaded.get(entry.doc_id)
            if doc is None or doc.gen != entry.gen or index >= len(doc.chunks):
                continue  # replaced or forgotten meanwhile
            chunk = doc.chunks[index]
        one = ranked[position]
        focus = one.focus if one.focus is not None and one.focus[1] <= len(chunk.text) else None
        candidates.append(
            Candidate(
                entry.doc_id, entry.info.title, chunk, one.hit.score, one.by_meaning, focus, source=entry.info.source
            )
        )
        ranks.append(one.ranks)
    return candidates, ranks


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
