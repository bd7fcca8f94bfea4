"""Documents: ingest, outline, search, window, summarize (filled in by the documents issue)."""

from __future__ import annotations

from .._live import Live
from ..store.writer import StoreHandle

__all__ = ["DocumentService"]


class DocumentService:
    """Ingests and pages through documents; the library face of doc_*."""

    def __init__(self, store: StoreHandle, live: Live) -> None:
        self._store = store
        self._live = live
