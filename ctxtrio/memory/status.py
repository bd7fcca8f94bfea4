"""Session status against the budget: the advice and warnings (pure, no trio)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from .model import Advice, SessionStatus
from .sessions.summary import SessionSummary, summarize_state

if TYPE_CHECKING:
    from .._live import Live
    from .state.columns import SessionState

__all__ = [
    "DEFAULT_KEEP_RECENT",
    "DEFAULT_TARGET_TOKENS",
    "MAX_PINS",
    "MIN_FOLDED",
    "NOTHING_TO_FOLD",
    "session_status",
    "summary_status",
]

#: Pins beyond this many crowd the window (practitioners cap anchors at 20-30).
MAX_PINS: Final = 30
#: What the status says of its token counts, by the counter's kind (the model's source then says from what).
_COUNTS: Final = {"exact": "exact", "calibrated": "calibrated estimate", "cold-start": "cold-start estimate"}
#: ``compact soon`` from this share of the budget; ``compact now`` above all of it.
SOON: Final = 0.8
#: A compaction folds at least this many entries (one entry folded into one summary would save little).
MIN_FOLDED: Final = 2
#: context_compact's defaults (the library's and the tool's): the advice names an argument when
#: these would fold nothing or leave a summary the budget cannot hold (_advice in render.py).
DEFAULT_KEEP_RECENT: Final = 10
DEFAULT_TARGET_TOKENS: Final = 400
#: The warning of a session near or over its budget that holds nothing context_compact can fold.
NOTHING_TO_FOLD: Final = (  # no tool named: the compact profile (tools/compact.py) has no context_update
    f"nothing left to fold (pins are never folded, and a summary is merged only into a compaction that folds at "
    f"least {MIN_FOLDED} entries): unpin what is no longer a constraint, delete entries no longer needed, or undo a summary "
    "(restore it) and compact again with a smaller target_tokens"
)


def session_status(state: SessionState, live: Live) -> SessionStatus:
    """Where ``state`` stands against ``live``'s budget (O(1): totals are kept on apply)."""
    return summary_status(summarize_state(state, 0), live, state.model.source)


def summary_status(summary: SessionSummary, live: Live, token_source: str) -> SessionStatus:
    """Where the session ``summary`` describes stands against ``live``'s budget."""
    budget = live.budget_tokens
    advice: Advice = "ok"
    if summary.live_tokens > budget:
        advice = "compact now"
    elif summary.live_tokens >= SOON * budget:
        advice = "compact soon"
    warnings: list[str] = []
    pins = summary.pins
    if pins > MAX_PINS:
        warnings.append(f"{pins} pins (over {MAX_PINS}): unpin what is no longer a constraint")
    if 2 * summary.pinned_tokens > budget:
        warnings.append(f"pins use {summary.pinned_tokens} of {budget} tokens (over half): unpin or shorten some")
    if advice != "ok" and summary.foldable < MIN_FOLDED:
        # Compaction folds neither pins nor summaries: advising it here sent a model round a loop of
        # "Nothing folded" answers, each advising it again.
        warnings.append(NOTHING_TO_FOLD)
    return SessionStatus(
        session_id=summary.session_id,
        title=summary.title,
        live_entries=summary.live,
        live_tokens=summary.live_tokens,
        budget_tokens=budget,
        budget_source=live.budget_source,
        pinned=pins,
        pinned_tokens=summary.pinned_tokens,
        superseded=summary.superseded,
        deleted=summary.deleted,
        summaries=summary.summaries,
        token_source=f"{'estimated' if live.counter.estimating_now else _COUNTS[live.counter.kind]} ({token_source})",
        last_activity=summary.last_activity,
        advice=advice,
        foldable=summary.foldable,
        warnings=tuple(warnings),
        retired=summary.retired,
    )
