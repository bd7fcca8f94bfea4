"""The LLM side: client with breaker and queue, calibration task, summarizer.

Names are imported on first use (PEP 562): the summarizer is imported by every server,
the client (httpx, httpcore, h2: ~0.1 CPU-s) only by one with an LLM or an embedding
endpoint configured. Type checkers see ordinary imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import load_name

if TYPE_CHECKING:
    # isort: off
    from .breaker import Breaker as Breaker, BreakerState as BreakerState
    from .calibration import run_calibrator as run_calibrator
    from .client import LLMClient as LLMClient, open_llm_client as open_llm_client
    from .messages import ChatMessage as ChatMessage, Completion as Completion, LLMSettings as LLMSettings
    from .summarizer import Summarizer as Summarizer, Summary as Summary, SummaryCache as SummaryCache
    # isort: on

#: Each name's defining module; ``__all__`` and the lazy loader are made from it.
_HOME = {
    "Breaker": ".breaker",
    "BreakerState": ".breaker",
    "run_calibrator": ".calibration",
    "LLMClient": ".client",
    "open_llm_client": ".client",
    "ChatMessage": ".messages",
    "Completion": ".messages",
    "LLMSettings": ".messages",
    "Summarizer": ".summarizer",
    "Summary": ".summarizer",
    "SummaryCache": ".summarizer",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> object:
    return load_name(__name__, globals(), _HOME, name)


def __dir__() -> list[str]:
    return sorted(__all__)
