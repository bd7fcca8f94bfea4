"""The LLM side: client with breaker and queue, calibration task, summarizer."""

from __future__ import annotations

from .breaker import Breaker, BreakerState
from .calibration import run_calibrator
from .client import LLMClient, open_llm_client
from .messages import ChatMessage, Completion, LLMSettings
from .summarizer import Summarizer, Summary, SummaryCache

__all__ = [
    "Breaker",
    "BreakerState",
    "ChatMessage",
    "Completion",
    "LLMClient",
    "LLMSettings",
    "Summarizer",
    "Summary",
    "SummaryCache",
    "open_llm_client",
    "run_calibrator",
]
