"""Documents: structure-aware chunks in a persistent index, read by search, window and outline."""

from ctxtrio.docs.service import DocumentService
from ctxtrio.docs.types import (
    DocSummary,
    DocumentInfo,
    IngestResult,
    Outline,
    OutlineEntry,
    SearchHit,
    SearchResult,
    Window,
    WindowChunk,
)

__all__ = [
    "DocSummary",
    "DocumentInfo",
    "DocumentService",
    "IngestResult",
    "Outline",
    "OutlineEntry",
    "SearchHit",
    "SearchResult",
    "Window",
    "WindowChunk",
]
