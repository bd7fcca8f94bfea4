"""Documents: structure-aware chunks in a persistent index, read by search, window and outline.

Names are imported on first use (PEP 562): the chunking child process
(``python -m ctxtrio.docs._chunk_worker``) then loads only ``ctxtrio.text`` and
``docs.chunks`` (for the record body it pre-encodes), not the service, the store writer or trio.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import (
        DocSummary,
        DocumentCheck,
        DocumentInfo,
        IndexCheck,
        IngestResult,
        Outline,
        OutlineEntry,
        SearchHit,
        SearchResult,
        Window,
        WindowChunk,
    )
    from .service import DocumentService

__all__ = [
    "DocSummary",
    "DocumentCheck",
    "DocumentInfo",
    "DocumentService",
    "IndexCheck",
    "IngestResult",
    "Outline",
    "OutlineEntry",
    "SearchHit",
    "SearchResult",
    "Window",
    "WindowChunk",
]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(".service" if name == "DocumentService" else ".model", __name__)
    value = getattr(module, name)
    globals()[name] = value
    return value
