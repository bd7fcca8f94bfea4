"""Recall's cuts: matches too large to fit whole, cut to their passages in the room packing left them. Pure.

:mod:`.packing` chooses which matches are shown whole and which are cut, and keeps room for the cut
ones; here they are cut to share that room as doc_search's hits share a budget (:func:`cut_all`), and
room still left goes to the best match neither shown whole nor cut (:func:`cut_into_rest`). Each passage
is the entry's lines and sentences densest in the query's words
(:func:`~ctxtrio.text.long_lines.cut_by_sentences`), under its first sentence when that holds a word of
the query and is short (:func:`.headline.with_headline`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from ..text.cutting import CUT_MARK
from ..text.embedding import coverage
from ..text.long_lines import cut_by_sentences
from .headline import with_headline
from .state.base import entry_line

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..text.tokens import TokenModel
    from .model import Entry
    from .state.columns import Item

__all__ = ["CUT_SHARE", "MIN_CUT_ROOM", "cut_all", "cut_into_rest"]

#: A cut entry is shown only when at least this much of its text fits, and, next to
#: whole entries, only when this much of the budget is left (a cut is worth it).
_MIN_CUT_TOKENS: Final = 8
MIN_CUT_ROOM: Final = 64
#: Query mode: the share of the budget left that each match too large to fit whole keeps for its
#: cut passage (doc_search's share, docs/sharing._SHARE); matches that fit share the rest.
CUT_SHARE: Final = 0.5


def cut_all(
    items: Sequence[Item],
    room: int,
    closing: Callable[[Sequence[Item]], str],
    query_terms: Sequence[str],
    model: TokenModel,
) -> tuple[list[tuple[Item, str, Entry]], str]:
    """``items`` (best first) cut to share ``room`` with the closing line (``closing(shown)``): the
    cuts shown, as (entry, line, entry as shown), and that line. The line is first sized as if
    every cut is shown; when one is not, it counts one more match left out, and when it then no
    longer fits, the lowest-ranked cut leaves and the rest are cut again."""
    while items:
        tail = closing(items)
        got = _cut_entries(items, query_terms, room - model.estimate(tail), model)
        if len(got) < len(items):
            tail = closing([item for item, _, _ in got])
        if got and sum(snapshot.tokens for _, _, snapshot in got) + model.estimate(tail) <= room:
            return got, tail
        items = [item for item, _, _ in got][:-1]
    return [], ""


def _cut_entries(
    items: Sequence[Item], query_terms: Sequence[str], room: int, model: TokenModel
) -> list[tuple[Item, str, Entry]]:
    """``items`` (best first) cut to their passages in ``room``, as doc_search's hits share a budget:
    each takes :data:`CUT_SHARE` of what is left (the first, the share of the query's words it
    holds when that is more; the last, or one whose share would be under :data:`MIN_CUT_ROOM`,
    all of it); one that fits no :data:`_MIN_CUT_TOKENS` of text is left out.
    The room the passages left unused is then given back to them in rank order."""
    got: list[tuple[Item, str, Entry]] = []
    for position, item in enumerate(items):
        # The first keeps at least the share of the room that it holds of the query's words: one
        # holding them all is most likely the answer and keeps all it needs (the keyword confidence
        # of semantic recall's fusion, text/embedding.coverage); the less it holds, the more is shared.
        # Not when the next holds them all too: which of the two answers is then no surer than their
        # BM25 and recency tell (an identifier asked for, in the entry that made it and in a later one
        # that names it), and the first taking all the room showed one of them only.
        held = coverage(item.text, query_terms) if position == 0 else 0.0
        if held == 1.0 and len(items) > 1 and coverage(items[1].text, query_terms) == 1.0:
            held = 0.0
        share = int(room * max(CUT_SHARE, held))
        if position + 1 == len(items) or share < MIN_CUT_ROOM:
            share = room
        if got and share < MIN_CUT_ROOM:
            break
        cut = _cut_entry(item, query_terms, share, model)
        if cut is not None:
            got.append((item, *cut))
            room -= cut[1].tokens
    # A passage that did not fill its share (its next line or sentence too long for it, or the
    # entry shown whole) leaves room the ones above it could have shown: it goes back to them,
    # best first, each cut again with its tokens and the room left.
    for position, (item, _, shown) in enumerate(got):
        if room < _MIN_CUT_TOKENS:
            break
        again = _cut_entry(item, query_terms, shown.tokens + room, model)
        if again is not None and again[1].tokens > shown.tokens:
            room -= again[1].tokens - shown.tokens
            got[position] = (item, *again)
    return got


def _cut_entry(item: Item, query_terms: Sequence[str], room: int, model: TokenModel) -> tuple[str, Entry] | None:
    """``item`` cut to fit ``room``: (its line, the entry as shown, with the cut text and its estimate).

    None when less than :data:`_MIN_CUT_TOKENS` of its text would fit.
    """
    head = model.estimate(entry_line(item.id, item.role, item.pinned, item.tags, "")) + 1
    room_for_text = room - head

    def attempt(text_room: int) -> tuple[str, str, int] | None:
        text = with_headline(
            item.text, cut_by_sentences(item.text, query_terms, text_room, model), query_terms, text_room, model
        )
        if text != item.text and item.text.startswith(text):  # a prefix cut: mark its end too
            text = f"{text.rstrip()} {CUT_MARK}"
        line = entry_line(item.id, item.role, item.pinned, item.tags, text)
        tokens = model.estimate(line)
        return (line, text, tokens) if tokens <= room else None

    # Estimates are not additive (a cut mark, a line head, boundaries at the joins), so
    # the text room that fits is searched for: the largest that does, in log2(room) cuts.
    if room_for_text < _MIN_CUT_TOKENS:
        return None
    best = attempt(room_for_text)
    if best is None:  # the largest text room in [low, high] that fits
        low, high = _MIN_CUT_TOKENS, room_for_text - 1
        while low <= high:
            middle = (low + high) // 2
            got = attempt(middle)
            if got is None:
                high = middle - 1
            else:
                best, low = got, middle + 1
    if best is None:
        return None
    line, text, tokens = best
    return line, replace(item.snapshot(), text=text, tokens=tokens)


def cut_into_rest(
    got: list[tuple[Item, str, Entry]],
    tail: str,
    passed: Sequence[Item],
    room: int,
    closing: Callable[[Sequence[Item]], str],
    query_terms: Sequence[str],
    model: TokenModel,
) -> tuple[list[tuple[Item, str, Entry]], str]:
    """``got`` (the cuts shown in ``room``, with their closing line ``tail``) and, while at least
    :data:`MIN_CUT_ROOM` of ``room`` is left, the best of ``passed`` (matches neither shown whole nor
    cut, best first) cut into what is left, with the closing line that then counts them as shown.

    A passage smaller than its share (its next line or sentence too long for it), or a first match
    that the closing line pushed out and that is cut in the room a match below it was to have,
    leaves room that nothing filled: asked 'quick_tcp_server' at 250 tokens, 100 were left unused
    while the entry that answers, ranked second, was not shown."""
    shown = {item.text for item, _, _ in got}
    for item in passed:
        if item.text in shown:
            continue
        items = [one for one, _, _ in got] + [item]
        after = closing(items)
        left = room - sum(snapshot.tokens for _, _, snapshot in got) - model.estimate(after)
        if left < MIN_CUT_ROOM:
            break
        cut = _cut_entry(item, query_terms, left, model)
        if cut is not None:
            got = [*got, (item, *cut)]
            shown.add(item.text)
            tail = after
    return got, tail
