"""Sessions: durable working memory (filled in by the session-memory issue)."""

from __future__ import annotations

from .._live import Live
from ..store.writer import StoreHandle

__all__ = ["SessionService"]


class SessionService:
    """Appends, recalls, compacts and reports on sessions; the library face of context_*."""

    def __init__(self, store: StoreHandle, live: Live) -> None:
        self._store = store
        self._live = live
