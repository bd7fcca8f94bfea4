"""Recall packing: pins and ranked matches into a token budget (pure, no trio).

The candidates come best first from :mod:`.ranking` (recent mode: newest first). Packing,
in priority order:

1. every live pin, oldest first, while it fits; a pin that does not fit is named in
   the result, never dropped silently (in query mode it is a candidate match too, so one
   the query matches is shown cut around its passage, step 4, rather than only named:
   a pinned log was otherwise the one entry recall could not show);
2. matches by blended score (recent mode: newest first), skipping any that does not
   fit (recent mode stops at the first, so the window stays contiguous), at most
   ``limit`` of them, whole and cut together, never two entries with the same text;
3. the text is laid out pins first, then matches, each group oldest first (the most
   recent material last, where models attend most; a summary where the entries it folds
   were, :func:`.ranking.place`), and ends with one line saying what
   did not fit. Entry lines and that line together stay within the budget by the token
   estimate: while they do not, the lowest-ranked match (then the latest pin) leaves;
4. matches too large to fit whole (recent mode: the entry where the window stopped) are
   shown cut, around their passage densest in the query's words (recent mode: from its
   start), with ``[...]`` where text was left out (:func:`ctxtrio.text.long_lines.cut_by_sentences`:
   whole lines, and the sentences of a long line; :func:`ctxtrio.text.cutting.cut_around`
   when not even one fits; its first sentence above the passage when that holds a query word and
   is short, :func:`.headline.with_headline`), when nothing else was shown or at least :data:`.cuts.MIN_CUT_ROOM`
   tokens are left, and no pin had to leave to make room for the closing line. In query mode they keep their rank and share the budget as doc_search's
   hits do: from where each is met, :data:`.cuts.CUT_SHARE` of the budget left (at least
   :data:`.cuts.MIN_CUT_ROOM`; a later one whose share would be less takes all of it) is kept for
   its passage, and only the rest goes to whole matches ranked below it; the passages are
   then cut in rank order, each to that share of the room left (the first, the share of the
   query's words it holds when that is more, unless the next holds them all too; the last, all
   of it), so the first gets the most, and the room a passage leaves unused goes back to those
   above it (:mod:`.cuts`). A match that the closing line pushed out and that ranked above the first one to
   cut is cut in its place. Room still left (at least :data:`.cuts.MIN_CUT_ROOM`) goes to the best
   matches neither shown nor cut, each cut in what is left. The recent window stays contiguous (the cut entry
   is the oldest shown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

from ..text.plural import plural
from .cuts import CUT_SHARE, MIN_CUT_ROOM, cut_all, cut_into_rest
from .model import RecallResult
from .ranking import place, shown_in_recall, tagged

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from collections.abc import Set as AbstractSet

    from ..text.tokens import TokenModel
    from .state.columns import Item, SessionState

__all__ = ["pack_recall"]

#: Packing stops looking for a match that fits once this little budget is left, or
#: after this many matches in a row did not fit (long result lists stay cheap).
_MIN_LINE_TOKENS: Final = 4
_MAX_MISSES: Final = 16
#: How many unshown pins the text names; the structured result names them all.
_NAMED_PINS: Final = 10


def _fit_pins(state: SessionState, budget_tokens: int) -> tuple[list[Item], list[Item], int]:
    """The pins that fit ``budget_tokens`` in pin order, the ones that do not, and the tokens used."""
    used = 0
    pins: list[Item] = []
    pins_missing: list[Item] = []
    for pin in state.sorted_pins():
        if used + pin.tokens <= budget_tokens:
            pins.append(pin)
            used += pin.tokens
        else:
            pins_missing.append(pin)
    return pins, pins_missing, used


def _make_room_for_trailer(
    pins: list[Item],
    pins_missing: list[Item],
    chosen: list[Item],
    used: int,
    by_limit: bool,
    *,
    matched: int,
    repeats: int,
    mode: Literal["query", "recent"],
    budget_tokens: int,
    model: TokenModel,
    by_meaning: AbstractSet[str],
    skipped: str | None,
    tags: AbstractSet[str],
    folded: tuple[str, str] | None,
    notes: Sequence[str],
) -> tuple[int, str, int, int, bool]:
    """Drop the last chosen entries, then the last pins, until the trailer fits beside them.

    ``pins``, ``pins_missing`` and ``chosen`` are changed in place. Returns the entries that
    did not fit, the trailer, its tokens, the tokens used, and whether the limit still cut.
    """
    while True:
        not_fit = max(0, matched - repeats - len(chosen))
        said = [*notes, *_meaning_notes([item.id for item in chosen], by_meaning, skipped)]
        trailer = _trailer(not_fit, matched, pins_missing, mode, by_limit, said, tags, folded)
        trailer_tokens = model.estimate(trailer)
        if used + trailer_tokens <= budget_tokens or not (chosen or pins):
            return not_fit, trailer, trailer_tokens, used, by_limit
        if chosen:
            used -= chosen.pop().tokens
            by_limit = False
        else:
            dropped = pins.pop()
            used -= dropped.tokens
            pins_missing.insert(0, dropped)
            pins_missing.sort(key=_ordinal)


def pack_recall(
    state: SessionState,
    candidates: Iterable[Item],
    *,
    matched: int,
    budget_tokens: int,
    limit: int | None,
    tags: AbstractSet[str] = frozenset(),
    mode: Literal["query", "recent"],
    model: TokenModel,
    query_terms: Sequence[str] = (),
    by_meaning: AbstractSet[str] = frozenset(),
    skipped: str | None = None,
    folded: tuple[str, str] | None = None,
    notes: Sequence[str] = (),
) -> RecallResult:
    """Pack pins and ``candidates`` (best first) into ``budget_tokens``; see the module doc.

    Candidates that are pinned or carry none of ``tags`` (when given) are skipped.
    ``query_terms`` (the terms of the query) place the cut of an entry too large to fit.
    ``by_meaning``: ids of entries semantic recall found and the words did not; the
    closing line names those shown. ``skipped``: why semantic recall was not asked. ``folded``: (entry,
    summary) of a folded entry the query matches, which the closing line names when nothing live does.
    ``notes``: what the closing line says first (why a query was not searched).
    """
    pins, pins_missing, used = _fit_pins(state, budget_tokens)
    seen = {pin.text for pin in pins}
    unshown_pins = frozenset(pin.id for pin in pins_missing) if mode == "query" else frozenset[str]()
    chosen, cuts, passed, repeats, by_limit, used = _choose(
        candidates, seen, used, budget_tokens, limit, tags, mode, unshown_pins
    )
    if mode == "recent":
        matched = max(matched, len(chosen) + repeats)
    if (
        folded is not None
        and used + model.estimate(_trailer(0, matched, (), mode, False, (), tags, folded)) > budget_tokens
    ):
        folded = None  # a pin comes before this hint: no pin leaves to make room for it
    ranked_chosen = list(chosen)
    pins_fitting = len(pins)
    not_fit, trailer, trailer_tokens, used, by_limit = _make_room_for_trailer(
        pins, pins_missing, chosen, used, by_limit, matched=matched, repeats=repeats, mode=mode,
        budget_tokens=budget_tokens, model=model, by_meaning=by_meaning, skipped=skipped, tags=tags, folded=folded,
        notes=notes,
    )  # fmt: skip
    if mode == "query" and len(chosen) < len(ranked_chosen) and (not cuts or len(chosen) < cuts[0][1]):
        # The closing line pushed out a match ranked above the ones to cut: it is cut first instead
        # (the one it replaces may still have the room it leaves: cuts.cut_into_rest).
        passed = [item for item, _ in cuts[:1]] + passed
        cuts = [(ranked_chosen[len(chosen)], len(chosen)), *cuts[1:]]

    def placed(item: Item) -> float:
        return place(state, item)

    chosen.sort(key=placed)
    shown = [(placed(item), item.line(), item.snapshot()) for item in chosen]
    if (chosen and budget_tokens - used < MIN_CUT_ROOM) or len(pins) < pins_fitting:
        # A pin that left to make room for the closing line comes before any match: the room it
        # left is not filled with a passage (at budget 50 a pin gave way to "[...] The flaky te [...]").
        cuts = []

    def closing(cut: Sequence[Item]) -> str:  # the closing line when ``cut`` is shown too
        said = [*notes, *_meaning_notes([item.id for item in chosen] + [item.id for item in cut], by_meaning, skipped)]
        missing = [pin for pin in pins_missing if all(pin.id != item.id for item in cut)]
        return _trailer(not_fit - _unpinned(cut), matched, missing, mode, by_limit, said, tags, folded)

    got, tail = cut_all([item for item, _ in cuts], budget_tokens - used, closing, query_terms, model)
    if mode == "query" and len(pins) == pins_fitting:
        spare = len(passed) if limit is None else max(0, limit - len(chosen) - len(got))
        got, tail = cut_into_rest(got, tail, passed[:spare], budget_tokens - used, closing, query_terms, model)
    if got:
        shown += [(placed(item), line, snapshot) for item, line, snapshot in got]
        shown.sort(key=lambda one: one[0])
        used += sum(snapshot.tokens for _, _, snapshot in got)
        not_fit -= _unpinned([item for item, _, _ in got])  # a pin cut to its passage was no match counted
        pins_missing = [pin for pin in pins_missing if all(pin.id != item.id for item, _, _ in got)]
        trailer, trailer_tokens = tail, model.estimate(tail)
    lines = [pin.line() for pin in pins] + [line for _, line, _ in shown]
    entries = [pin.snapshot() for pin in pins] + [snapshot for _, _, snapshot in shown]
    text = "".join(lines) + trailer
    return RecallResult(
        session_id=state.session_id,
        entries=tuple(entries),
        pinned_shown=len(pins),
        matched=matched,
        not_fit=not_fit,
        pins_not_fit=tuple(pin.id for pin in pins_missing),
        used_tokens=used + trailer_tokens,
        budget_tokens=budget_tokens,
        mode=mode,
        text=text,
        by_meaning=tuple(entry.id for entry in entries if entry.id in by_meaning),
        semantic_skipped=skipped,
    )


def _choose(
    candidates: Iterable[Item],
    seen: set[str],
    used: int,
    budget_tokens: int,
    limit: int | None,
    tags: AbstractSet[str],
    mode: Literal["query", "recent"],
    unshown_pins: AbstractSet[str] = frozenset(),
) -> tuple[list[Item], list[tuple[Item, int]], list[Item], int, bool, int]:
    """The matches shown whole, best first, and those to cut (see the module doc). ``unshown_pins``:
    the pins that did not fit, taken as matches (they never fit whole, so they can only be cut).

    Returns (chosen, the matches to cut best first, each with how many chosen rank above it,
    the matches that neither fit nor were to be cut, best first, repeats, whether the limit
    cut, tokens used). ``seen`` (the texts shown already) gains the chosen ones. Recent mode
    cuts one, where the window stops.
    """
    chosen: list[Item] = []
    cuts: list[tuple[Item, int]] = []
    passed: list[Item] = []
    repeats = misses = 0
    reserved = 0  # query mode: the room kept for the cut passages
    for item in candidates:
        if limit is not None and len(chosen) + len(cuts) >= limit:  # the matches to cut count too
            return chosen, cuts, passed, repeats, True, used
        if budget_tokens - reserved - used < _MIN_LINE_TOKENS:
            break
        if not shown_in_recall(item, tags) and not (item.id in unshown_pins and tagged(item, tags)):
            continue
        if item.text in seen:  # texts are stored stripped
            repeats += 1  # said once already: not shown, and not "did not fit" either
            continue
        if used + item.tokens <= budget_tokens - reserved:
            chosen.append(item)
            used += item.tokens
            seen.add(item.text)
            misses = 0
            continue
        free = budget_tokens - reserved - used
        if not cuts or (mode == "query" and free >= MIN_CUT_ROOM and all(item.text != c.text for c, _ in cuts)):
            if mode == "query":
                # Its passage keeps its place in the ranking, as doc_search's hits do: a share of
                # what is left is kept for it, not filled first by whole matches ranked below it.
                share = int(free * CUT_SHARE)
                reserved += max(MIN_CUT_ROOM, share) if not cuts or share >= MIN_CUT_ROOM else free
            cuts.append((item, len(chosen)))
        elif all(item.text != other.text for other in passed):
            passed.append(item)
        if mode == "recent" or (misses := misses + 1) >= _MAX_MISSES:
            break
    return chosen, cuts, passed, repeats, False, used


def _unpinned(items: Iterable[Item]) -> int:
    """How many of ``items`` are no pins: the matches among them that ``matched`` counts."""
    return sum(1 for item in items if not item.pinned)


def _ordinal(item: Item) -> int:
    return item.ordinal


def _meaning_notes(shown: Sequence[str], by_meaning: AbstractSet[str], skipped: str | None) -> list[str]:
    """What the closing line says of semantic recall: the entries shown that it found, or why it was skipped."""
    notes: list[str] = []
    found = [entry_id for entry_id in shown if entry_id in by_meaning]
    if found:
        notes.append(f"found by meaning, not by their words: {' '.join(found)}")
    if skipped:
        notes.append(f"keyword recall only: {skipped}")
    return notes


def _trailer(
    not_fit: int,
    matched: int,
    pins_missing: Sequence[Item],
    mode: str,
    by_limit: bool,
    notes: Sequence[str] = (),
    tags: AbstractSet[str] = frozenset(),
    folded: tuple[str, str] | None = None,
) -> str:
    """The closing line: what was left out and what to do, and ``notes``; empty when there is nothing to say."""
    parts: list[str] = []
    if mode == "query" and matched == 0:
        parts.append("no unpinned entry matches the query")
        if folded is not None:  # else "not recorded", to a model that wrote it before a compaction
            entry, summary = folded
            parts.append(
                f"{entry} matches it, folded into {summary} by a compaction: "
                f"context_update entry_id={entry} restore=true brings it back"
            )
    elif tags and matched == 0:  # (the answer was empty, which the tools render as 'no live entries')
        parts.append(f"no unpinned entry is tagged {' or '.join(sorted(tags))}")
    if not_fit:
        what = (
            plural(not_fit, "older entry", "older entries")
            if mode == "recent"
            else plural(not_fit, "more match", "more matches")
        )
        parts.append(f"{what} not shown: raise {'limit' if by_limit else 'budget_tokens'}")
    if pins_missing:
        named = " ".join(pin.id for pin in pins_missing[:_NAMED_PINS])
        if len(pins_missing) > _NAMED_PINS:
            named += f" +{len(pins_missing) - _NAMED_PINS}"
        # Not "over budget_tokens": a pin that fits alone may leave to make room for the answer's own
        # lines (the closing line, the token count), and a model told it is too big unpins it.
        parts.append(f"pins not shown, too little room in budget_tokens: {named}")
    parts.extend(notes)
    return "(" + "; ".join(parts) + ")\n" if parts else ""
