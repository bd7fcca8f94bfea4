"""Documents: structure-aware chunks in a persistent index, read by search, window and outline.

Names are imported on first use (PEP 562): the chunking child process
(``python -m ctxtrio.docs._chunk_worker``) then loads only ``ctxtrio.text`` and
``docs.chunks`` (for the record body it pre-encodes), not the service, the store writer or trio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import load_name

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


#: Each name's defining module.
_HOME = {name: ".service" if name == "DocumentService" else ".model" for name in __all__}


def __getattr__(name: str) -> object:
    return load_name(__name__, globals(), _HOME, name)
