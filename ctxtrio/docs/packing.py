"""Packing chunks into a token budget, for search results and windows. Pure.

Costs are estimated on exactly what the model will see: the chunk header from
:mod:`ctxtrio.docs.render` plus the text, each estimate rounded up (so the sum leans
high, as every estimate here should).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .chunks import StoredChunk
from .model import SearchHit, WindowChunk
from .render import chunk_header, hit_header

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..text.tokens import TokenModel

__all__ = ["CUT_MARK", "Candidate", "contiguous_text", "cut_around", "cut_to_fit", "fresh_text", "pack_hits", "pack_window"]

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


def cut_to_fit(text: str, budget_tokens: int, model: TokenModel) -> str:
    """The longest prefix of ``text`` within ``budget_tokens``, ending at a line break or
    space when one lies in its last fifth."""
    low = model.fitting_prefix(text, budget_tokens)
    if low == len(text):
        return text
    for separator in ("\n", " "):
        at = text.rfind(separator, 0, low)
        if at > low * 4 // 5:
            return text[:at]
    return text[:low]


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
        header = hit_header(candidate.doc_id, candidate.title, chunk.index, chunk.trail, candidate.score)
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
        header = hit_header(best.doc_id, best.title, chunk.index, chunk.trail, best.score)
        header_tokens = model.estimate(header) + _GAP_TOKENS + _CUT_NOTE_TOKENS
        room = max(_MIN_TEXT_TOKENS, budget_tokens - header_tokens)
        text = cut_around(chunk.text, query_terms, room, model)
        tokens = model.estimate(text)
        hits.append(_hit(best, text, tokens, cut=True))
        omitted -= 1
        used = header_tokens + tokens
    return hits, omitted, used


#: Marks where a search hit was cut (before and after the part shown).
CUT_MARK: Final = "[…]"
#: Tokens of the " [cut to fit the budget]" note the rendering adds to a cut hit.
_CUT_NOTE_TOKENS: Final = 8


def cut_around(text: str, query_terms: Sequence[str], budget_tokens: int, model: TokenModel) -> str:
    """The part of ``text`` around its best match of ``query_terms`` that fits ``budget_tokens``.

    The best match is the line holding the most distinct terms (the first such line).
    Whole lines around it are added, alternately after and before, while they fit; a
    line too long for the budget is cut by characters, centred on the term. Cuts are
    marked with :data:`CUT_MARK`. Without a match (or terms) it is the prefix cut.
    """
    spot = _best_match(text, query_terms)
    if spot is None:
        return cut_to_fit(text, budget_tokens, model)
    if model.estimate(text) <= budget_tokens:
        return text
    line_start = text.rfind("\n", 0, spot) + 1
    line_end = text.find("\n", spot)
    line_end = len(text) if line_end < 0 else line_end
    start, end = line_start, line_end
    if _cost(text, start, end, model) > budget_tokens:
        start, end = _centre_chars(text, spot, line_start, line_end, budget_tokens, model)
        return _marked(text, start, end)
    grow_after = True
    while True:
        grown = False
        for after in (grow_after, not grow_after):
            if after and end < len(text):
                nxt = text.find("\n", end + 1)
                candidate = (start, len(text) if nxt < 0 else nxt)
            elif not after and start > 0:
                candidate = (text.rfind("\n", 0, start - 1) + 1, start)
                candidate = (candidate[0], end)
            else:
                continue
            if _cost(text, candidate[0], candidate[1], model) <= budget_tokens:
                start, end = candidate
                grown = True
        grow_after = not grow_after
        if not grown:
            break
    return _marked(text, start, end)


def _marked(text: str, start: int, end: int) -> str:
    return (CUT_MARK + " " if start > 0 else "") + text[start:end] + (" " + CUT_MARK if end < len(text) else "")


def _cost(text: str, start: int, end: int, model: TokenModel) -> int:
    return model.estimate(_marked(text, start, end))


def _centre_chars(
    text: str, spot: int, low: int, high: int, budget_tokens: int, model: TokenModel
) -> tuple[int, int]:
    """The widest [start, end) within [low, high) centred on ``spot`` that fits (binary search on the half-width)."""
    best = (spot, min(high, spot + 1))
    lo, hi = 0, high - low
    while lo <= hi:
        half = (lo + hi) // 2
        start, end = max(low, spot - half), min(high, spot + half + 1)
        if _cost(text, start, end, model) <= budget_tokens:
            best = (start, end)
            lo = half + 1
        else:
            hi = half - 1
    return best


def _best_match(text: str, query_terms: Sequence[str]) -> int | None:
    """Offset of the first term in the line with the most distinct terms, or None."""
    folded = text.casefold()
    if len(folded) != len(text):
        folded = text.lower() if len(text.lower()) == len(text) else text
    best: tuple[int, int] | None = None  # (-distinct terms, offset)
    lines: dict[int, set[str]] = {}
    first_in_line: dict[int, int] = {}
    for term in query_terms:
        at = folded.find(term)
        found = 0
        while at >= 0 and found < 200:
            line = folded.rfind("\n", 0, at) + 1
            lines.setdefault(line, set()).add(term)
            first_in_line[line] = min(first_in_line.get(line, at), at)
            found += 1
            at = folded.find(term, at + len(term))
    for line, seen in lines.items():
        key = (-len(seen), line)
        if best is None or key < best:
            best = key
    return first_in_line[best[1]] if best is not None else None


def _hit(candidate: Candidate, text: str, tokens: int, *, cut: bool) -> SearchHit:
    chunk = candidate.chunk
    return SearchHit(candidate.doc_id, candidate.title, chunk.index, chunk.trail, candidate.score, text, tokens, cut)
