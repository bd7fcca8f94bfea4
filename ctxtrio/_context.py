"""The :class:`Context` a running instance hands to its users and to the tool layer.

Defined apart from ``_app.py`` (which builds it) so the tool layer can depend on the
type without depending on the wiring.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._config import Config
from ._live import Live
from .docs.service import DocumentService
from .llm.client import LLMClient
from .llm.summarizer import Summarizer
from .memory.service import SessionService
from .store.handle import StoreHandle
from .store.layout import DataDir

__all__ = ["Context"]


@dataclass(frozen=True, slots=True)
class Context:
    """Everything one open ctxtrio instance offers. Valid inside ``open_context`` only."""

    config: Config
    data: DataDir
    store: StoreHandle
    live: Live
    sessions: SessionService
    documents: DocumentService
    summarizer: Summarizer
    #: None with --no-llm.
    llm: LLMClient | None
