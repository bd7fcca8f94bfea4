"""Finishing compactions whose LLM summary was not ready by the call's deadline (issue 10): the pure part.

A compaction folds its entries at once (the window needs the room now). When the LLM
summary is not ready by the call's deadline, the summary entry written is the
extractive stand-in, the job goes on in the background with each finished step kept
in the session's slice file (:mod:`.slices`), and that file notes the summary as
pending. Every later ``compact`` of the session first looks at the pending ones
(:func:`pending_summaries`). Once the LLM summary of one is wholly done (see
``Summarizer.resume``, which after a restart also puts the job back on the queue,
resuming from the kept steps), :func:`replacement_records` replace the stand-in in
one append:

* a ``patch`` restoring the stand-in (its entries come back, it is retired), then
* a new ``summary`` entry folding the same entries, with the LLM's text.

Both lines go in one write; a crash that tears the second leaves the entries live and
unfolded: nothing is lost, the session is only no longer compacted.

``CompactionMethods._finish_pending`` (:mod:`.compact`) does this for one session at the
start of a compaction; what is here is pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...store.records import NewRecord
from .plan import CompactionPlan, fold_plan, summary_record

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..state.columns import SessionState

__all__ = ["PendingSummary", "pending_summaries", "replacement_records", "still_pending"]


@dataclass(frozen=True, slots=True)
class PendingSummary:
    """A stand-in summary entry, the plan that rebuilds the text it folded, and its target."""

    summary_id: str
    plan: CompactionPlan
    target_tokens: int


def pending_summaries(state: SessionState, pending: Mapping[str, int]) -> tuple[list[PendingSummary], list[str]]:
    """(the pending stand-ins still live, with their plans; the ids pending no more).

    A stand-in restored, deleted or folded into nothing meanwhile waits no more.
    """
    found: list[PendingSummary] = []
    gone: list[str] = []
    for summary_id, target_tokens in pending.items():
        item = state.items.get(summary_id)
        folded = state.unfoldable(item) if item is not None and item.live and item.role == "summary" else []
        if len(folded) < 2:
            gone.append(summary_id)
            continue
        found.append(PendingSummary(summary_id, fold_plan(folded, 0), target_tokens))
    return found, gone


def still_pending(state: SessionState, pending: PendingSummary) -> bool:
    """Whether the stand-in still folds exactly the entries it folded when planned."""
    item = state.items.get(pending.summary_id)
    if item is None or not item.live or item.role != "summary":
        return False
    return tuple(folded.id for folded in state.unfoldable(item)) == pending.plan.folded


def replacement_records(pending: PendingSummary, *, text: str, tokens_after: int) -> list[NewRecord]:
    """The patch retiring the stand-in and the LLM summary folding the same entries, in that order."""
    reason = f"the LLM summary, finished in the background, replaces the extractive {pending.summary_id}"
    return [
        NewRecord("patch", {"restored": True}, id=pending.summary_id),
        summary_record(pending.plan, text=text, method="llm", reason=reason, tokens_after=tokens_after),
    ]
