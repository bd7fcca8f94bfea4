"""Session status against the budget: the advice and warnings (pure, no trio)."""

from __future__ import annotations

from typing import Final

from .._live import Live
from .model import Advice, SessionStatus
from .state import SessionState

__all__ = ["MAX_PINS", "session_status"]

#: Pins beyond this many crowd the window (practitioners cap anchors at 20-30).
MAX_PINS: Final = 30
#: ``compact soon`` from this share of the budget; ``compact now`` above all of it.
SOON: Final = 0.8


def session_status(state: SessionState, live: Live) -> SessionStatus:
    """Where ``state`` stands against ``live``'s budget (O(1): totals are kept on apply)."""
    budget = live.budget_tokens
    advice: Advice = "ok"
    if state.live_tokens > budget:
        advice = "compact now"
    elif state.live_tokens >= SOON * budget:
        advice = "compact soon"
    warnings: list[str] = []
    pins = len(state.pins)
    if pins > MAX_PINS:
        warnings.append(f"{pins} pins (over {MAX_PINS}): unpin what is no longer a constraint")
    if 2 * state.pinned_tokens > budget:
        warnings.append(
            f"pins use {state.pinned_tokens} of {budget} tokens (over half): unpin or shorten some"
        )
    return SessionStatus(
        session_id=state.session_id,
        title=state.title,
        live_entries=state.live_count,
        live_tokens=state.live_tokens,
        budget_tokens=budget,
        budget_source=live.budget_source,
        pinned=pins,
        pinned_tokens=state.pinned_tokens,
        superseded=state.superseded,
        deleted=state.deleted,
        summaries=state.summaries,
        token_source=state.model.source,
        last_activity=state.last_activity,
        advice=advice,
        warnings=tuple(warnings),
    )
