"""ctxtrio: an external context buffer for local language models, over MCP, on Trio.

::

    async with ctxtrio.open_context(ctxtrio.Config(data_dir=path)) as ctx:
        ...

Names are imported on first use (PEP 562), so ``ctxtrio --stdio`` can start answering
its host before the heavier modules load; type checkers see ordinary imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._platform import require_posix
from ._version import __version__

if TYPE_CHECKING:
    from ._app import open_context, serve
    from ._config import Config
    from ._context import Context
    from ._errors import (
        ConfigError,
        CtxError,
        EventLoopError,
        Hint,
        IngestError,
        InputError,
        InvalidIdError,
        LLMError,
        LLMInterruptedError,
        LLMResponseError,
        LLMTimeoutError,
        LLMUnavailableError,
        LockTimeoutError,
        NotFoundError,
        StoreError,
    )
    from .docs import (
        DocSummary,
        DocumentInfo,
        DocumentService,
        IngestResult,
        Outline,
        OutlineEntry,
        SearchHit,
        SearchResult,
        Window,
        WindowChunk,
    )
    from .llm.summarizer import Summary
    from .memory import (
        Advice,
        Appended,
        CompactResult,
        Entry,
        EntryStatus,
        OpenResult,
        RecallResult,
        Role,
        SessionInfo,
        SessionService,
        SessionStatus,
        UpdateResult,
    )

_EXPORTS = {
    "Advice": ".memory",
    "Appended": ".memory",
    "CompactResult": ".memory",
    "Config": "._config",
    "ConfigError": "._errors",
    "Context": "._context",
    "CtxError": "._errors",
    "DocSummary": ".docs",
    "DocumentInfo": ".docs",
    "DocumentService": ".docs",
    "Entry": ".memory",
    "EntryStatus": ".memory",
    "EventLoopError": "._errors",
    "Hint": "._errors",
    "IngestError": "._errors",
    "IngestResult": ".docs",
    "InputError": "._errors",
    "InvalidIdError": "._errors",
    "LLMError": "._errors",
    "LLMInterruptedError": "._errors",
    "LLMResponseError": "._errors",
    "LLMTimeoutError": "._errors",
    "LLMUnavailableError": "._errors",
    "LockTimeoutError": "._errors",
    "NotFoundError": "._errors",
    "OpenResult": ".memory",
    "Outline": ".docs",
    "OutlineEntry": ".docs",
    "RecallResult": ".memory",
    "Role": ".memory",
    "SearchHit": ".docs",
    "SearchResult": ".docs",
    "SessionInfo": ".memory",
    "SessionService": ".memory",
    "SessionStatus": ".memory",
    "StoreError": "._errors",
    "Summary": ".llm.summarizer",
    "UpdateResult": ".memory",
    "Window": ".docs",
    "WindowChunk": ".docs",
    "open_context": "._app",
    "serve": "._app",
}

#: Modules that import nothing POSIX-only: the config and the errors work everywhere.
_PORTABLE = {"._config", "._errors"}

__all__ = [
    "Advice",
    "Appended",
    "CompactResult",
    "Config",
    "ConfigError",
    "Context",
    "CtxError",
    "DocSummary",
    "DocumentInfo",
    "DocumentService",
    "Entry",
    "EntryStatus",
    "EventLoopError",
    "Hint",
    "IngestError",
    "IngestResult",
    "InputError",
    "InvalidIdError",
    "LLMError",
    "LLMInterruptedError",
    "LLMResponseError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "LockTimeoutError",
    "NotFoundError",
    "OpenResult",
    "Outline",
    "OutlineEntry",
    "RecallResult",
    "Role",
    "SearchHit",
    "SearchResult",
    "SessionInfo",
    "SessionService",
    "SessionStatus",
    "StoreError",
    "Summary",
    "UpdateResult",
    "Window",
    "WindowChunk",
    "__version__",
    "open_context",
    "serve",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxtrio' has no attribute {name!r}")
    if module not in _PORTABLE:
        require_posix()  # before anything imports the store (fcntl): one clear error on Windows
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
