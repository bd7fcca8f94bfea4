"""Packing chunks into a token budget, for search results and windows. Pure.

Costs are estimated on exactly what the model will see: the chunk header from
:mod:`ctxtrio.docs.render` plus the text, each estimate rounded up (so the sum leans
high, as every estimate here should).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from ..text.cutting import CUT_MARK, cut_around, cut_to_fit
from .chunks import StoredChunk
from .model import Outline, SearchHit, WindowChunk
from .render import chunk_header, hit_header, render_outline

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..text.tokens import TokenModel

# CUT_MARK, cut_around and cut_to_fit live in text/cutting.py (sessions cut entries too); re-exported here.
__all__ = [
    "CUT_MARK", "Candidate", "contiguous_text", "cut_around", "cut_to_fit", "fresh_text", "pack_hits", "pack_outline",
    "pack_window",
]  # fmt: skip

#: Tokens a chunk gets at least when it is cut to fit a budget smaller than its header.
_MIN_TEXT_TOKENS = 8
#: Separator lines between blocks of a result.
_GAP_TOKENS = 1


@dataclass(frozen=True, slots=True)
class Candidate:
    """A search match before packing."""

    doc_id: str
    title: str
    chunk: StoredChunk
    score: float
    #: Found by semantic recall and not by keyword search.
    by_meaning: bool = False


def fresh_text(previous: StoredChunk | None, chunk: StoredChunk) -> str:
    """The part of ``chunk`` not already shown by ``previous``, its predecessor (the overlap skipped)."""
    if previous is not None and previous.index + 1 == chunk.index and chunk.start < previous.end <= chunk.end:
        return chunk.text[previous.end - chunk.start :]
    return chunk.text


def contiguous_text(chunks: Sequence[StoredChunk]) -> str:
    """The source text that consecutive ``chunks`` cover, each character once."""
    parts: list[str] = []
    previous: StoredChunk | None = None
    for chunk in chunks:
        parts.append(fresh_text(previous, chunk))
        previous = chunk
    return "".join(parts)


def pack_window(
    chunks: Sequence[StoredChunk], first: int, last: int, budget_tokens: int, model: TokenModel
) -> list[WindowChunk]:
    """Chunks ``first`` .. at most ``last`` in order, as many as fit; at least one (cut if needed)."""
    out: list[WindowChunk] = []
    used = 0
    previous: StoredChunk | None = None
    for position in range(first, last + 1):
        chunk = chunks[position]
        text = fresh_text(previous, chunk)
        header_tokens = model.estimate(chunk_header(chunk.index, chunk.trail)) + _GAP_TOKENS
        text_tokens = model.estimate(text)
        if used + header_tokens + text_tokens > budget_tokens:
            if not out:
                room = max(_MIN_TEXT_TOKENS, budget_tokens - header_tokens)
                text = cut_to_fit(text, room, model)
                out.append(WindowChunk(chunk.index, chunk.trail, text, model.estimate(text), cut=True))
            break
        out.append(WindowChunk(chunk.index, chunk.trail, text, text_tokens))
        used += header_tokens + text_tokens
        previous = chunk
    return out


def pack_hits(
    candidates: Sequence[Candidate], budget_tokens: int, model: TokenModel, query_terms: Sequence[str] = ()
) -> tuple[list[SearchHit], int, int]:
    """Hits in the given (score) order that fit, skipping any that do not; returns
    (hits, omitted, tokens used). When none fits, the best one is cut to fit around
    its best match of ``query_terms`` (see :func:`cut_around`)."""
    hits: list[SearchHit] = []
    used = 0
    omitted = 0
    for candidate in candidates:
        chunk = candidate.chunk
        header = hit_header(
            candidate.doc_id, candidate.title, chunk.index, chunk.trail, candidate.score, by_meaning=candidate.by_meaning
        )
        header_tokens = model.estimate(header) + _GAP_TOKENS
        text_tokens = model.estimate(chunk.text)
        if used + header_tokens + text_tokens > budget_tokens:
            omitted += 1
            continue
        hits.append(_hit(candidate, chunk.text, text_tokens, cut=False))
        used += header_tokens + text_tokens
    if not hits and candidates:
        best = candidates[0]
        chunk = best.chunk
        header = hit_header(best.doc_id, best.title, chunk.index, chunk.trail, best.score, by_meaning=best.by_meaning)
        header_tokens = model.estimate(header) + _GAP_TOKENS + _CUT_NOTE_TOKENS
        room = max(_MIN_TEXT_TOKENS, budget_tokens - header_tokens)
        text = cut_around(chunk.text, query_terms, room, model)
        tokens = model.estimate(text)
        hits.append(_hit(best, text, tokens, cut=True))
        omitted -= 1
        used = header_tokens + tokens
    return hits, omitted, used


#: Tokens of the " [cut to fit the budget]" note the rendering adds to a cut hit.
_CUT_NOTE_TOKENS: Final = 8


def _hit(candidate: Candidate, text: str, tokens: int, *, cut: bool) -> SearchHit:
    chunk = candidate.chunk
    return SearchHit(
        candidate.doc_id, candidate.title, chunk.index, chunk.trail, candidate.score, text, tokens, cut,
        by_meaning=candidate.by_meaning,
    )


def pack_outline(outline: Outline, budget_tokens: int, model: TokenModel) -> Outline:
    """``outline`` with as many of its first entries as fit ``budget_tokens`` rendered (at least one).

    The rendering of a shortened outline ends with "... N more chunks: call again with
    from=...", so nothing is dropped silently. Binary search on the entry count.
    """
    if len(outline.entries) <= 1 or model.estimate(render_outline(outline)) <= budget_tokens:
        return outline
    low, high = 1, len(outline.entries)  # low entries always kept; high entries do not fit
    while high - low > 1:
        middle = (low + high) // 2
        if model.estimate(render_outline(replace(outline, entries=outline.entries[:middle]))) <= budget_tokens:
            low = middle
        else:
            high = middle
    return replace(outline, entries=outline.entries[:low])
