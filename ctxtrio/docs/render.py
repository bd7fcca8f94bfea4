"""Compact text for the model, one function per result type. Pure.

Every line counts against an 8k window: headers are short, numbers plain, and each
result ends with what to do next when that is not obvious. The headers of chunks are
defined here and used by the packing (:mod:`ctxtrio.docs.packing`), so the budget
accounts for exactly what is shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._limits import SEARCH_WORDS
from ..text.harmless import harmless, one_line
from ..text.plural import first_to_last, plural, token_count

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..text.tokens import TokenModel
    from .model import DocSummary, DocumentInfo, IngestResult, Outline, OutlineEntry, SearchHit, SearchResult, Window

__all__ = [
    "chunk_header",
    "hit_header",
    "render_forget",
    "render_ingest",
    "render_list",
    "render_list_page",
    "render_outline",
    "render_search",
    "render_summary",
    "render_window",
    "search_head",
    "search_hit_header",
    "search_too_small",
    "shown_title",
    "trail_text",
    "window_head",
]


#: Longer heading trails are shown by their end (the most specific headings).
_MAX_TRAIL_CHARS = 160


def trail_text(trail: Sequence[str], limit: int = _MAX_TRAIL_CHARS) -> str:
    """``trail`` joined by `` > ``, shown by its end when longer than ``limit`` characters."""
    text = " > ".join(trail)
    return text if len(text) <= limit else "..." + text[3 - limit :]


#: A heading trail shown in a hit's header is shown by its end, at most this long.
_UNDER_CHARS = 80


def hit_header(
    doc_id: str,
    title: str,
    index: int,
    lines: tuple[int, int, int] | None = None,
    *,
    by_meaning: bool = False,
    under: Sequence[str] = (),
) -> str:
    """A hit's first line, short (it is paid for by every hit of every answer): where the passage
    is, i.e. the document (its title only where the id does not already say it; "" for none), the chunk, and
    the lines shown of a cut chunk. The heading trail and the score are in the library's
    :class:`~.model.SearchHit` (doc_search's structured content has the score, not the trail:
    doc_outline shows trails); how to read around a hit is said once, in the head line.
    ``under``: a trail to show (its end), for a hit whose text does not hold the query words
    its headings matched (:attr:`~.model.SearchHit.under`)."""
    named = f' "{title}"' if _title_adds(doc_id, title) else ""
    part = f" lines {lines[0]}-{lines[1]}" if lines is not None else ""
    how = " | found by meaning, not by its words" if by_meaning else ""
    heading = f" | under {trail_text(under, _UNDER_CHARS)}" if under else ""
    return f"[{doc_id}{named} #{index}{part}{heading}{how}]"


def _title_adds(doc_id: str, title: str) -> bool:
    """Whether ``title`` says more than ``doc_id``: not when its name (up to the first dot) is in the id."""
    stem = title.split(".", 1)[0].strip().casefold()
    return bool(stem) and stem not in doc_id.casefold()


def shown_title(title: str, text: str) -> str:
    """``title`` for a hit showing ``text``, or "" when the text opens with it: a text ingested inline
    is titled by its first line (docs/arguments.first_line), which a hit from its start shows anyway
    (a commit message's subject, 80 characters, ~30 tokens of a header the document id already makes
    unique)."""
    start = 0
    while title and start < len(text):  # its first line with words (not splitting the whole text)
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        words = one_line(text[start:end].lstrip("#"))  # as the title was made of it (docs/arguments.clean_title)
        if words:
            return "" if words.startswith(title) else title
        start = end + 1
    return title


def chunk_header(index: int, trail: Sequence[str], lines: tuple[int, int, int] | None = None, column: int = 1) -> str:
    """A window's chunk header; ``lines``: the chunk's lines shown, when reading started inside it (its
    trail is then left out, as doc_search's passages leave it: the window before showed it, and at a
    budget that cut the chunk, a long trail took the room of the text: budget_tokens=120 could not
    read on in library.json's #0). ``column``: the character of the first line shown where the text
    starts, named when not 1 (raw HTML's lines run to thousands of characters, and two pieces of one
    were both headed "[#0 lines 2-2]")."""
    if lines is not None:
        within = f", line {lines[0]} from character {column:,}" if column > 1 else ""
        return f"[#{index} lines {lines[0]}-{lines[1]}{within}]"
    return f"[#{index} · {trail_text(trail)}]" if trail else f"[#{index}]"


def _doc(info: DocumentInfo) -> str:
    return f'{info.doc_id} "{info.title}"'


def render_ingest(result: IngestResult) -> str:
    info = result.doc
    if result.unchanged:
        return (
            f"Unchanged: {_doc(info)} already holds this file's content ({plural(info.chunks, 'chunk')}, {token_count(info.tokens)}); "
            f"nothing re-ingested. Next: doc_outline, doc_search or doc_window with doc_id={info.doc_id}."
        )
    verb = "Replaced" if result.replaced else "Ingested"
    return (
        f"{verb} {_doc(info)}: {plural(info.chunks, 'chunk')}, {token_count(info.tokens)}, {info.chars} chars. "
        f"Next: doc_outline, doc_search or doc_window with doc_id={info.doc_id}."
    )


def render_list(docs: Sequence[DocumentInfo]) -> str:
    if not docs:
        return "No documents. Add one with doc_ingest."
    lines = [f"{plural(len(docs), 'document')}:"]
    lines.extend(_list_line(info) for info in docs)
    return "\n".join(lines)


def _list_line(info: DocumentInfo) -> str:
    # The path stays as stored (it is how the file is found again); shown, it is made harmless (ESC in a file's name).
    return f"- {_doc(info)}: {plural(info.chunks, 'chunk')}, {token_count(info.tokens)}, {harmless(info.source)}"


def render_list_page(
    docs: Sequence[DocumentInfo], *, offset: int, budget_tokens: int, model: TokenModel
) -> tuple[str, int, int | None]:
    """One page of the list from ``offset``, within ``budget_tokens``: (text, how many shown, next offset).

    At least one document is shown; the last line says where the next page starts.
    """
    total = len(docs)
    if not docs:
        return "No documents. Add one with doc_ingest.", 0, None
    if offset >= total:
        return (
            f"{plural(total, 'document')}; from={offset} is past the end: use {first_to_last('from', total)}.",
            0,
            None,
        )
    lines = [f"{plural(total, 'document')}:"]
    used = model.estimate(lines[0]) + model.estimate(f"(next page: doc_list from={total}, {total} more)") + 2
    shown = 0
    for info in docs[offset:]:
        line = _list_line(info)
        cost = model.estimate(line) + 1
        if shown and used + cost > budget_tokens:
            break
        lines.append(line)
        used += cost
        shown += 1
    end = offset + shown
    next_offset = end if end < total else None
    if next_offset is not None:
        lines.append(f"(next page: doc_list from={next_offset}, {total - end} more)")
    return "\n".join(lines), shown, next_offset


def render_forget(info: DocumentInfo) -> str:
    return f"Forgot {_doc(info)}: its chunks, index entries, cursors and cached summaries are gone."


def render_outline(outline: Outline) -> str:
    info = outline.doc
    lines = [f"{_doc(info)}: {plural(info.chunks, 'chunk')}, {token_count(info.tokens)}. #index [tokens] trail"]
    if any(entry.summary is not None for entry in outline.entries):
        for entry in outline.entries:
            where = f" {trail_text(entry.trail)}" if entry.trail else ""
            lines.append(f"#{entry.index} [{entry.tokens}]{where}: {entry.summary or ''}")
    else:
        lines.extend(_grouped(outline.entries))
    if outline.remaining:
        following = outline.start + len(outline.entries)
        lines.append(f"... {plural(outline.remaining, 'more chunk')}: call again with from={following}.")
    if outline.note:
        lines.append(f"Note: {outline.note}")
    return "\n".join(lines)


def _grouped(entries: Sequence[OutlineEntry]) -> list[str]:
    """Runs of chunks under one heading trail, one line each."""
    lines: list[str] = []
    run: list[OutlineEntry] = []
    for entry in [*entries, None]:
        if run and (entry is None or entry.trail != run[0].trail):
            first, last = run[0].index, run[-1].index
            span = f"#{first}" if first == last else f"#{first}-{last}"
            tokens = sum(item.tokens for item in run)
            lines.append(f"{span} [{tokens}] {trail_text(run[0].trail) or '(no heading)'}")
            run = []
        if entry is not None:
            run.append(entry)
    return lines


#: A query is echoed in full up to this many characters (a pasted passage would eat the budget).
_ECHO_CHARS = 120


def render_search(result: SearchResult) -> str:
    if not result.hits:
        left_out = _left_out(result)
        if result.omitted:
            return f"{plural(result.omitted, 'chunk')} matched but none fits budget_tokens={result.budget_tokens}; raise it.{left_out}"
        return (
            f"No chunk matches {_echo(result.query)}.{left_out} Try other words, or doc_outline to see the structure."
        )
    return "\n\n".join([search_head(result), *(_hit(hit) for hit in result.hits)])


def search_head(result: SearchResult) -> str:
    """The first line of a search answer with hits: how many fit of how many matched (``+``: more
    beyond ``limit``), its size, and once how to read a cut hit whole (short: every token of it
    is taken from the hits; the query is the caller's own, not echoed). That hint names where a hit's
    header (``[library.os #58 lines 2-3]``) holds doc_window's two arguments, not blank ones
    (``doc_id= from=#``) a small model may copy as they stand."""
    skipped = f" Keyword search only: {result.semantic_skipped}." if result.semantic_skipped else ""
    counted = ", estimated" if result.estimated else ""
    shown = len(result.hits)
    if result.omitted or result.more:
        fit = f"{shown} of {shown + result.omitted}{'+' if result.more else ''} hits fit"
    else:  # "1 of 1 hits fit" read as a program's count; both are shorter than service's widest head, so no room changes
        fit = "The only hit fits" if shown == 1 else f"All {shown} hits fit"
    head = f"{fit} ({result.used_tokens} tokens{counted}).{_left_out(result)}{skipped}"
    if any(hit.cut for hit in result.hits):
        head += " Whole: doc_window [doc_id #from]."
    return head


def search_too_small(budget_tokens: int, least_tokens: int) -> str:
    """Why a search is refused at ``budget_tokens``: its head and its first hit's header leave no room
    for text (``least_tokens``: what they take with some text), as doc_window refuses a budget too
    small for its own lines. budget_tokens=50 answered '[...] : Tim [...]' in 83 tokens."""
    advised = -(-max(least_tokens, budget_tokens + 1) // 10) * 10  # rounded up to tens: an advice, not a count
    return f"budget_tokens={budget_tokens} cannot hold a hit with some text: pass budget_tokens={advised} or more."


def _echo(query: str) -> str:
    return repr(query if len(query) <= _ECHO_CHARS else query[:_ECHO_CHARS] + "…")


def _left_out(result: SearchResult) -> str:
    return f" Only its first {SEARCH_WORDS} distinct words were searched." if result.words_left_out else ""


def _hit(hit: SearchHit) -> str:
    return f"{search_hit_header(hit)}\n{hit.text}"


def search_hit_header(hit: SearchHit) -> str:
    """The header :func:`render_search` gives ``hit``."""
    under = hit.trail if hit.under else ()
    title = shown_title(hit.title, hit.text) if hit.titled else ""
    return hit_header(hit.doc_id, title, hit.index, hit.lines, by_meaning=hit.by_meaning, under=under)


def render_window(window: Window, *, start: int | None = None, onward: Callable[[int], str] | None = None) -> str:
    """``window`` as the tools send it; ``start``: the chunk the caller asked to start at, if it named one;
    ``onward``: see :func:`window_head`.

    An empty window that started at a given ``start`` says that chunk is past the end: the
    cursor was not read (nor moved), so naming it would send the reader after the wrong thing.
    """
    info = window.doc
    if not window.chunks:
        numbers = "#0" if info.chunks == 1 else f"#0-{info.chunks - 1}"
        has = f"{_doc(info)} has {plural(info.chunks, 'chunk')} ({numbers})"
        if start is not None:
            return (
                f"{has}: from={start} is past the end. "
                f"Pass {first_to_last('from', info.chunks)}, or leave from out to read on from the cursor."
            )
        return f"{has} and the cursor is past the end. Start over with reset=true, or pass from=N."
    body = [
        f"{chunk_header(chunk.index, chunk.trail, chunk.lines, chunk.column)}\n{chunk.text}" for chunk in window.chunks
    ]
    return "\n\n".join([window_head(window, onward), *body])


def window_head(window: Window, onward: Callable[[int], str] | None = None) -> str:
    """The first line of a window with chunks: which, where the cursor goes, and what was cut.

    ``onward``: the address that reads on from a chunk, for a reader without doc_window's cursor (the
    chunks resource); its head then names no cursor and says that the tool reads a cut chunk whole."""
    info = window.doc
    first, last = window.chunks[0].index, window.chunks[-1].index
    counted = f" ({token_count(sum(chunk.tokens for chunk in window.chunks))}, estimated)" if window.estimated else ""
    head = f"{_doc(info)} {_span(first, last)} of {info.chunks}{counted}."
    if window.at_end:
        head += " End of document." if onward else " End of document (reset=true starts over)."
    else:
        inside = f" line {window.next_line}" if window.next_offset else ""  # the cursor stands in a cut chunk
        inside += f" from character {window.next_column:,}" if window.next_offset and window.next_column > 1 else ""
        head += (
            f" Next: #{window.next_index}{inside} ({onward(window.next_index) if onward else 'call doc_window again'})."
        )
    cut = [chunk.index for chunk in window.chunks if chunk.cut]
    if cut:  # short: the head is paid from the budget that cut the text
        tool = "doc_window " if onward else ""
        head += f" #{cut[0]} was cut: {tool}from={cut[0]} with more budget_tokens reads it whole."
    return head


def render_summary(summary: DocSummary) -> str:
    info = summary.doc
    whole = summary.start == 0 and summary.end == info.chunks - 1
    span = "whole document" if whole else _span(summary.start, summary.end)
    head = f"Summary of {_doc(info)}, {span} ({summary.method}{', cached' if summary.cached else ''})."
    if summary.note:
        head += f" Note: {summary.note}."
    return f"{head}\n{summary.text}"


def _span(first: int, last: int) -> str:
    """``chunk #3`` or ``chunks #3-5``: "chunks #1-1" read as two chunks or a typo."""
    return f"chunk #{first}" if first == last else f"chunks #{first}-{last}"
