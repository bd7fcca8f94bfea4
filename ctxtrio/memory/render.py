"""Compact text for the model, one function per session result type. Pure.

The mirror of :mod:`ctxtrio.docs.render`: every line counts against an 8k window, and
a result ends with what to do next (compact, recall, undo) when that is not obvious.
"""

from __future__ import annotations

import time
from itertools import pairwise
from typing import TYPE_CHECKING

from .._limits import COMPACT_TARGET
from ..text.plural import plural, token_count
from .status import DEFAULT_KEEP_RECENT, DEFAULT_TARGET_TOKENS, MIN_FOLDED

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .model import Appended, CompactResult, OpenResult, RecallResult, SessionInfo, SessionStatus, UpdateResult

__all__ = [
    "entry_counts",
    "id_span",
    "render_appended",
    "render_compacted",
    "render_opened",
    "render_recalled",
    "render_status",
    "render_updated",
    "session_line",
]


#: "verbatim" beside fewer tokens read as if something was cut: the texts are whole, their heads
#: ("[e3 note #tag] ") became the summary's one.
_METHOD = {"verbatim": "verbatim (the texts whole, under one head)"}


def _when(ts: float) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%MZ", time.gmtime(ts))
    except (OverflowError, ValueError, OSError):  # not a time (state.py keeps such values out)
        return "unknown time"


def _usage(status: SessionStatus) -> str:
    return f"{status.live_tokens}/{status.budget_tokens} tokens ({status.percent}%)"


def _advice(status: SessionStatus) -> str:
    """What to do next, as one sentence per concern (empty when all is well)."""
    lines: list[str] = []
    if status.foldable < MIN_FOLDED and status.advice != "ok":  # compacting cannot help: the warning says what does
        lines.append("Over budget." if status.advice == "compact now" else "Above 80% of the budget.")
    elif status.advice == "compact now":
        lines.append(f"Over budget: call context_compact{_compact_args(status)} now.")
    elif status.advice == "compact soon":
        lines.append(f"Above 80% of the budget: call context_compact{_compact_args(status)} soon.")
    lines.extend(f"Warning: {warning}." for warning in status.warnings)
    return "\n".join(lines)


def _compact_args(status: SessionStatus) -> str:
    """The arguments the advised compaction needs when its defaults would not help, else empty.

    A model follows the advice as written: at --budget 200, a compaction that kept the newest
    10 entries folded nothing, or one that summarized to 400 tokens left 198% of the budget,
    and each answer said "call context_compact now" again (a loop).
    """
    args: list[str] = []
    if status.foldable - DEFAULT_KEEP_RECENT < MIN_FOLDED:  # the default keeps them all: fold half
        args.append(f"keep_recent={min(status.foldable - MIN_FOLDED, status.foldable // 2)}")
    if DEFAULT_TARGET_TOKENS > status.budget_tokens // 2:  # the summary alone could take the budget
        args.append(f"target_tokens={max(COMPACT_TARGET.low, status.budget_tokens // 4)}")
    return " with " + " ".join(args) if args else ""


def _with_advice(text: str, status: SessionStatus) -> str:
    advice = _advice(status)
    return f"{text}\n{advice}" if advice else text


def id_span(ids: Sequence[str]) -> str:
    """``ids`` (oldest first) as short as is true: ``e2..e7`` only when every entry between is among them.

    A compaction skips pins and summaries, so "Folded 6 entries (e2..e8)" took in a pinned e4 it
    left: runs (``e2..e3, e5..e8``) when there are three at most, else the entries left out between
    when as few (``e2..e30 but e4, e9, e15``), else their count; ids that are not ``e`` and a number in
    order (an imported entry's) are listed when four at most, else the first and last and how many
    between (``x1, x9 and 7 entries between``: "x1, ..., x9" left the count out, and "the entries it
    folds (...)" gives none of its own).
    """
    seqs = [int(item_id[1:]) if item_id[:1] == "e" and item_id[1:].isdigit() else -1 for item_id in ids]
    if len(ids) < 2 or -1 in seqs or any(b <= a for a, b in pairwise(seqs)):
        if len(ids) <= 4:
            return ", ".join(ids)
        return f"{ids[0]}, {ids[-1]} and {plural(len(ids) - 2, 'entry', 'entries')} between"
    runs = [[seqs[0], seqs[0]]]
    for seq in seqs[1:]:
        if seq == runs[-1][1] + 1:
            runs[-1][1] = seq
        else:
            runs.append([seq, seq])
    if len(runs) <= 3:
        return ", ".join(f"e{low}" if low == high else f"e{low}..e{high}" for low, high in runs)
    left = [seq for (_, high), (low, _) in pairwise(runs) for seq in range(high + 1, low)]
    but = ", ".join(f"e{seq}" for seq in left) if len(left) <= 3 else plural(len(left), "entry", "entries") + " between"
    return f"{ids[0]}..{ids[-1]} but {but}"


def render_status(status: SessionStatus) -> str:
    lines = [
        f'{status.session_id} "{status.title}": {_usage(status)}, advice: {status.advice}',
        f"{status.live_entries} live ({status.pinned} pinned, {token_count(status.pinned_tokens)}; "
        f"{plural(status.summaries, 'summary', 'summaries')}), "
        f"{entry_counts(status.superseded, status.deleted, status.retired)}",
        f"budget: {status.budget_source}; token counts: {status.token_source}",
    ]
    return _with_advice("\n".join(lines), status)


def entry_counts(superseded: int, deleted: int, retired: int) -> str:
    """``2 superseded, 1 deleted, 3 earlier summaries (merged or undone)``: of ``deleted`` entries, the ``retired``
    summaries (merged or undone; none was deleted by hand) are counted apart, and named only when there are some.

    context_status's line and ``ctxtrio show``'s head (which reaches it through :mod:`ctxtrio.memory`) both say it.
    """
    counts = f"{superseded} superseded, {deleted - retired} deleted"
    return counts + (
        f", {plural(retired, 'earlier summary', 'earlier summaries')} (merged or undone)" if retired else ""
    )


def render_opened(result: OpenResult) -> str:
    status = result.status
    if result.created:
        text = (
            f'Opened new session {status.session_id} ("{status.title}"). Use this session_id in every context_* call.'
        )
    else:
        # A resume with another title renames the session: said, lest a model rename one it meant only to resume.
        renamed = f' (renamed from "{result.renamed_from}")' if result.renamed_from is not None else ""
        text = (
            f'Resumed {status.session_id} "{status.title}"{renamed}: '
            f"{plural(status.live_entries, 'live entry', 'live entries')} "
            f"({status.pinned} pinned), {_usage(status)}. context_recall before acting on earlier work."
        )
    return _with_advice(text, status)


def render_appended(result: Appended) -> str:
    entry, status = result.entry, result.status
    if result.duplicate:
        text = f"Already stored as {entry.id} (same text); nothing added" + (", pinned." if entry.pinned else ".")
    else:
        text = f"Stored {entry.id} ({status.live_entries} live, {_usage(status)})."
    return _with_advice(text, status)


def render_recalled(result: RecallResult) -> str:
    if not result.text:
        return f"Session {result.session_id} has no live entries."
    return result.text + (f"({result.used_tokens} tokens, estimated)\n" if result.estimated else "")


def render_compacted(result: CompactResult) -> str:
    if not result.folded:
        # The note starts "nothing to fold: ..." when the plan found nothing: said once, not "Nothing folded: nothing to fold".
        reason = result.note.removeprefix("nothing to fold: ")
        text = f"Nothing to fold: {reason}." if reason != result.note else f"Nothing folded: {result.note}."
    elif result.dry_run:
        text = (
            # "; ": "(e2, e4, e6, 33 tokens)" read the count as one more of the list.
            f"Would fold {len(result.folded)} entries ({id_span(result.folded)}; {result.tokens_before} tokens) "
            f"into one summary{_merging(result)}. Call again without dry_run to do it."
        )
    else:
        assert result.summary is not None
        summary_id = result.summary.id
        text = (
            f"Folded {len(result.folded)} entries ({id_span(result.folded)}) into {summary_id}{_merging(result)}: "
            f"{result.tokens_before} -> {result.tokens_after} tokens, {_METHOD.get(result.method, result.method)}. "
            f"Now {_usage(result.status)}. Undo: context_update entry_id={summary_id} restore=true."
        )
        if result.merged:
            text += f" The undo brings back all {len(result.folded)} entries."
        if result.note:
            text += f"\nNote: {result.note}."
    return _with_advice(text, result.status)


def _merging(result: CompactResult) -> str:
    """``, merging summary e14 (the entries folded there are summarized again, from their own text)``, or ""."""
    if not result.merged:
        return ""
    noun = "summary" if len(result.merged) == 1 else "summaries"
    return f", merging {noun} {id_span(result.merged)} (the entries folded there are summarized again, from their own text)"


def render_updated(result: UpdateResult) -> str:
    entry = result.entry
    if not result.changed and result.folds_now and not result.still_folded:
        text = _undone_already(entry.id, result.folds_now, result.merged_into)
    elif not result.changed:
        text = f"{entry.id} unchanged ({entry.status}{', pinned' if entry.pinned else ''})."
    elif result.restored and entry.folds:
        count, verb = plural(len(result.restored), "entry", "entries"), "is" if len(result.restored) == 1 else "are"
        text = f"Undid compaction {entry.id}: {count} ({id_span(result.restored)}) {verb} live again."
    elif entry.status == "deleted" and entry.folds and result.still_folded:  # "brings it back" was false
        text = (
            f"{entry.id} deleted; the entries it folds ({id_span(result.still_folded)}) stay out of recall; "
            "restore=true undoes its compaction (they come back, the summary does not)."
        )
    elif entry.status == "deleted" and entry.folds:  # deleted, or retired by a restore: nothing left to undo
        text = f"{entry.id} deleted; the entries it folded ({id_span(entry.folds)}) are live already (each restored)."
    elif entry.status == "deleted":
        text = f"{entry.id} deleted; restore=true brings it back."
    elif result.restored and result.folded_into is not None:  # its summary still says it: recall may show both
        summary = result.folded_into
        if result.still_folded:
            back = "comes" if len(result.still_folded) == 1 else "come"
            undo = f"undoes that compaction ({id_span(result.still_folded)} {back} back too; the summary goes)"
        else:
            undo = "retires it (it folds nothing else now)"
        text = (
            f"{entry.id} restored; summary {summary} still says what it said of it, so recall may show both: "
            f"restore=true on {summary} {undo}."
        )
    elif result.restored:
        text = f"{entry.id} restored."
    else:
        text = f"{entry.id} {'pinned' if entry.pinned else 'unpinned'}."
    return _with_advice(f"{text} Now {_usage(result.status)}.", result.status)


def _undone_already(summary_id: str, folds_now: tuple[tuple[str, str], ...], merged_into: str | None) -> str:
    """A restore of a summary undone before (or merged into a later one): that it was, where its entries are
    now, and that there is no redo ("e42 unchanged (deleted)" said none of it)."""
    where: dict[str, list[str]] = {}
    for folded_id, now in folds_now:
        where.setdefault(now, []).append(folded_id)
    parts = [
        f"{id_span(ids)} {'is' if len(ids) == 1 else 'are'} live again" for now, ids in where.items() if now == "live"
    ]
    parts += [f"{id_span(ids)} deleted since" for now, ids in where.items() if now == "deleted"]
    parts += [f"{id_span(ids)} folded into {now} since" for now, ids in where.items() if now not in ("live", "deleted")]
    redo = "; context_compact folds live entries again" if "live" in where else ""
    if merged_into is not None:  # nobody undid it: a later compaction took its entries over
        return (
            f"{summary_id} was merged into {merged_into} by a later compaction: of the entries it folded, "
            f"{', '.join(parts)}. restore=true on {merged_into} undoes that compaction{redo}."
        )
    return f"{summary_id} was undone already: of the entries it folded, {', '.join(parts)}. There is no redo{redo}."


def session_line(info: SessionInfo) -> str:
    """One session in the list: ``id "title": 12 live, 2026-01-02 10:00Z`` and a newline."""
    return f'{info.session_id} "{info.title}": {info.live_entries} live, {_when(info.last_activity)}\n'
