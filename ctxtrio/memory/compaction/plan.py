"""Compaction plans and the summary record (pure, no trio).

A compaction folds the oldest live, unpinned, non-summary entries (all but the
``keep_recent`` most recent of them) into one ``summary`` entry. Nothing is deleted:
the originals are superseded and come back when the summary is restored.

It also merges the live unpinned summaries of earlier compactions: the new summary's
record names them (``merges``; its ``folds`` lists only the entries folded now, so the
line stays short however long the session), and replay moves the entries they fold to
it and retires them (:mod:`..state.columns`), in the one line. Its text is made from
all those entries themselves, never from a summary (summaries of summaries drift). Without the merge a session compacted whenever its
status said so gained a ~``target_tokens`` summary each time and never came back under
its budget (a week of 3,000 notes at 4,000: 294 summaries, 111,440 live tokens).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from ...store.records import JSON, NewRecord
from ...text.entries import EntryMemo, EntryText, summarize_entries
from ...text.plural import plural
from ..model import MAX_TAGS
from ..render import id_span
from ..state.base import entry_line
from ..status import MIN_FOLDED

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ...text.tokens import TokenModel
    from ..state.columns import SessionState
    from ..state.entries import Item

__all__ = [
    "CompactionPlan", "entries_extract", "fold_plan", "folded_meanwhile", "memo_of", "nothing_folded", "plan_compaction", "still_foldable",
    "summary_record", "summary_tokens",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """Which entries to fold, the text to summarize, and their tokens now."""

    folded: tuple[str, ...]
    text: str
    tags: tuple[str, ...]
    tokens_before: int
    candidates: int
    entries: tuple[EntryText, ...] = ()
    #: The earlier summaries this compaction retires, and the entries they fold (among ``folded``).
    merged: tuple[str, ...] = ()
    taken: frozenset[str] = frozenset()


def plan_compaction(state: SessionState, keep_recent: int) -> CompactionPlan:
    """Fold every foldable entry but the ``keep_recent`` newest, and the entries of every live unpinned
    summary (merged); nothing if fewer than two entries are foldable."""
    foldable = state.foldable()
    chosen = foldable[: max(0, len(foldable) - keep_recent)]
    if len(chosen) < MIN_FOLDED:
        return CompactionPlan((), "", (), 0, len(foldable))
    summaries = (item for item in state.order if item.live and item.role == "summary" and not item.pinned)
    folding = [(summary, state.unfoldable(summary)) for summary in summaries]
    merged = [summary for summary, folds in folding if folds]
    again = [folded for _, folds in folding for folded in folds]
    plan = fold_plan(sorted([*chosen, *again], key=lambda item: item.ordinal), len(foldable))
    # What leaves the window: the chosen entries and the summaries retired (their entries were out of it).
    tokens_before = sum(item.tokens for item in chosen) + sum(summary.tokens for summary in merged)
    taken = frozenset(item.id for item in again)
    return replace(plan, tokens_before=tokens_before, merged=tuple(summary.id for summary in merged), taken=taken)


def nothing_folded(candidates: int, keep_recent: int) -> str:
    """Why a compaction of ``candidates`` foldable entries keeping ``keep_recent`` folds nothing, and what would."""
    if candidates < MIN_FOLDED:
        return (
            f"nothing to fold: {plural(candidates, 'live unpinned entry', 'live unpinned entries')} besides summaries "
            f"(pins are never folded, and a summary is merged only into a compaction that folds at least {MIN_FOLDED})"
        )
    # The model asked to keep too many: naming the keep_recent that folds spares it a guess and a loop.
    # Not "keep_recent=0 or less" when only 0 folds: that invites keep_recent=-1, which is refused as out of range.
    most = candidates - MIN_FOLDED
    folds = f"keep_recent={most} or less folds the older ones" if most else "keep_recent=0 folds them"
    return (
        f"nothing to fold: keep_recent={keep_recent} keeps the newest of the {candidates} live unpinned entries, "
        f"and a compaction folds at least {MIN_FOLDED}: {folds}"
    )


def folded_meanwhile(state: SessionState, since: int) -> str:
    """The compactions written at or after ordinal ``since`` (while a call waited for the one running),
    as the reason it found nothing to fold: three calls at once answered "Nothing folded: nothing to
    fold: 2 live unpinned entries ..." twice, which reads as if the session never had any."""
    written = [state.order[ordinal] for ordinal in range(since, len(state))]
    said = [f"{item.id} ({id_span(item.folds)})" for item in written if item.folds and item.live]
    if not said:
        return ""
    return f"another compaction folded them while this call waited: {', '.join(said)}"


def fold_plan(chosen: Sequence[Item], candidates: int) -> CompactionPlan:
    """The plan that folds ``chosen`` (in order): the same entries always give the same text."""
    tags: dict[str, None] = {}
    for item in chosen:
        tags.update(dict.fromkeys(item.tags))
    text = "\n".join(item.text if item.role == "note" else f"{item.role}: {item.text}" for item in chosen)
    return CompactionPlan(
        folded=tuple(item.id for item in chosen),
        text=text,
        tags=tuple(tags)[:MAX_TAGS],
        tokens_before=sum(item.tokens for item in chosen),
        candidates=candidates,
        entries=tuple(EntryText(item.role, item.text, tuple(item.tags), item.pinned, item.id) for item in chosen),
    )


#: Per loaded state, what the extracts read of its entries' texts: a merge summarizes every entry folded so
#: far, and each but the newest was read by the compaction before. Dropped with the state (a reload starts afresh).
_MEMOS: WeakKeyDictionary[SessionState, EntryMemo] = WeakKeyDictionary()


def memo_of(state: SessionState) -> EntryMemo:
    """The memo of ``state``'s entries for :func:`entries_extract` (call it on the event loop's thread)."""
    memo = _MEMOS.get(state)
    if memo is None:
        memo = _MEMOS[state] = EntryMemo()
    return memo


def entries_extract(
    plan: CompactionPlan, model: TokenModel, memo: EntryMemo | None = None
) -> Callable[[str, int], str]:
    """The extractive summary of ``plan`` (run it in a thread): decisions first, repeats once.

    Plain sentence scoring favours rare words and kept status lines over decisions
    (issue 10); :func:`~ctxtrio.text.entries.summarize_entries` ranks entries instead. ``memo``
    (:func:`memo_of` the state): one summary at a time may use it, as one compaction of a session runs at a time.
    """

    def extract(text: str, target_tokens: int) -> str:
        return summarize_entries(plan.entries, target_tokens=target_tokens, model=model, memo=memo)

    return extract


def still_foldable(state: SessionState, plan: CompactionPlan) -> bool:
    """Whether every planned entry is still live, unpinned and not a summary, or still folded by
    one of the summaries the plan merges, each of them still live and unpinned. An entry the plan takes
    from a merged summary must still be folded by it: one restored meanwhile is live, but the record
    would not fold it (``taken`` is left out of its folds) while the summary holds its text."""
    merged = set(plan.merged)
    for summary_id in merged:
        summary = state.items.get(summary_id)
        if summary is None or not summary.live or summary.pinned or summary.role != "summary":
            return False
    for folded_id in plan.folded:
        item = state.items.get(folded_id)
        if item is None or item.pinned or item.role == "summary" or (item.live and folded_id in plan.taken):
            return False
        if not item.live and (item.deleted or item.superseded_by not in merged):
            return False
    return True


def summary_tokens(state: SessionState, plan: CompactionPlan, text: str, model: TokenModel) -> int:
    """The summary's line tokens, with a provisional id one past the newest entry."""
    provisional = f"e{(state.order[-1].seq if state.order else 0) + 1}"
    return model.estimate(entry_line(provisional, "summary", False, plan.tags, text))


def summary_record(plan: CompactionPlan, *, text: str, method: str, reason: str, tokens_after: int) -> NewRecord:
    """The one journal line of a compaction: the summary entry that folds ``plan.folded``."""
    body: dict[str, JSON] = {
        "text": text,
        "role": "summary",
        "tags": list(plan.tags),
        "pinned": False,
        "folds": [folded for folded in plan.folded if folded not in plan.taken],
        "tokens_before": plan.tokens_before,
        "tokens_after": tokens_after,
        "method": method,
        "reason": reason,
    }
    if plan.merged:
        body["merges"] = list(plan.merged)
    return NewRecord("entry", body, id_prefix="e")
