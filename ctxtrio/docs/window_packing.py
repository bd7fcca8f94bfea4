"""Packing a reading window (doc_window, the chunks resource) and an outline into a token budget. Pure.

Split from :mod:`ctxtrio.docs.packing`, which packs search hits: a window shows consecutive chunks in
order, each character once (the overlap skipped), as many as fit; an outline as many of its first
entries as fit. Costs are estimated on exactly what the model will see, each estimate rounded up.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..text.cutting import cut_to_fit
from .model import Outline, WindowChunk
from .render import chunk_header, render_outline
from .sharing import GAP_TOKENS

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..text.tokens import TokenModel
    from .chunks import StoredChunk

#: Tokens a chunk gets at least when it is cut to fit a budget smaller than its header.
MIN_TEXT_TOKENS = 8
#: Tokens of text a window fills its room with at least when it cuts the chunk after its last whole one
#: (a sentence or two: less costs the cut's clause in the head for a fragment).
_MIN_FILL_TOKENS = 32


def fresh_text(previous: StoredChunk | None, chunk: StoredChunk) -> str:
    """The part of ``chunk`` not already shown by ``previous``, its predecessor (the overlap skipped)."""
    return chunk.text[_fresh_offset(previous, chunk) :]


def _fresh_offset(previous: StoredChunk | None, chunk: StoredChunk) -> int:
    """Where :func:`fresh_text` starts in ``chunk``'s text."""
    if previous is not None and previous.index + 1 == chunk.index and chunk.start < previous.end <= chunk.end:
        return previous.end - chunk.start
    return 0


def line_span(text: str, start: int, end: int) -> tuple[int, int, int]:
    """(first, last, of): the 1-based lines of ``text`` that ``text[start:end]`` shows, of its lines."""
    return text.count("\n", 0, start) + 1, text.count("\n", 0, max(start, end - 1)) + 1, text.count("\n") + 1


#: A line at least this long is named with the character a piece of it starts at: pieces of a shorter
#: line are told apart by their line numbers (a window shows more than one such line), and the clause
#: costs every window a few tokens of room (400 one-line paragraphs at 400: 29 -> 32 calls).
LONG_LINE_CHARS = 200


def line_column(text: str, at: int) -> int:
    """The 1-based character of its line that ``text[at]`` is; 1 in a line under :data:`LONG_LINE_CHARS`."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    long = (end if end >= 0 else len(text)) - start >= LONG_LINE_CHARS
    return at - start + 1 if long else 1


def contiguous_text(chunks: Sequence[StoredChunk]) -> str:
    """The source text that consecutive ``chunks`` cover, each character once."""
    parts: list[str] = []
    previous: StoredChunk | None = None
    for chunk in chunks:
        parts.append(fresh_text(previous, chunk))
        previous = chunk
    return "".join(parts)


def pack_window(
    chunks: Sequence[StoredChunk],
    first: int,
    last: int,
    budget_tokens: int,
    model: TokenModel,
    offset: int = 0,
    *,
    fill: bool = False,
) -> list[WindowChunk]:
    """Chunks ``first`` .. at most ``last`` in order, as many as fit; at least one (cut if needed).

    ``offset``: characters of chunk ``first``'s text already read (doc_window's cursor stands inside a
    chunk an earlier window cut): it is shown from there, its header naming the lines shown.
    ``fill``: the chunk after the last one that fits whole is cut to the room left, when that room holds
    :data:`_MIN_FILL_TOKENS` of its text (doc_window, whose cursor reads on inside a cut chunk: without
    it a window resumed inside a chunk stopped at the next one, 198 of 400 tokens in read23's case). Not
    for the chunks resource, whose next address names a whole chunk: the cut part would be shown twice."""
    out: list[WindowChunk] = []
    used = 0
    previous: StoredChunk | None = None
    for position in range(first, last + 1):
        chunk = chunks[position]
        skip = offset if position == first else _fresh_offset(previous, chunk)
        text = chunk.text[skip:]
        inside = position == first and offset > 0
        lines = line_span(chunk.text, skip, len(chunk.text)) if inside else None
        column = line_column(chunk.text, skip) if inside else 1
        header_tokens = model.estimate(chunk_header(chunk.index, chunk.trail, lines, column)) + GAP_TOKENS
        text_tokens = model.estimate(text)
        if used + header_tokens + text_tokens > budget_tokens:
            room = budget_tokens - used - header_tokens
            if not out or (fill and room >= _MIN_FILL_TOKENS):
                kept = cut_to_fit(text, max(MIN_TEXT_TOKENS, room), model)
                shown = line_span(chunk.text, skip, skip + len(kept)) if inside else None
                # Whole when it fits the floor (a heading's chunk): a head saying it was cut costs tokens for nothing.
                cut = kept != text
                out.append(WindowChunk(chunk.index, chunk.trail, kept, model.estimate(kept), cut, skip, shown, column))
            break
        out.append(WindowChunk(chunk.index, chunk.trail, text, text_tokens, offset=skip, lines=lines, column=column))
        used += header_tokens + text_tokens
        previous = chunk
    return out


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
