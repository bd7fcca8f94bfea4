"""ctxtrio: an external context buffer for local language models, over MCP, on Trio.

::

    async with ctxtrio.open_context(ctxtrio.Config(data_dir=path)) as ctx:
        ...

Names are imported on first use (PEP 562), so ``ctxtrio --stdio`` can start answering
its host before the heavier modules load; type checkers see ordinary imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import load_name
from ._platform import require_posix
from ._version import __version__ as __version__

#: The public API: each defining module and the names it gives. ``__all__`` and the lazy
#: loader below are made from it; the imports under TYPE_CHECKING are what type checkers
#: read, and tests/test_public_api.py holds them to this table name for name.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "._app": ("open_context", "serve"),
    "._config": ("Config",),
    "._context": ("Context",),
    "._progress": ("Progress",),
    "._errors": (
        "ConfigError", "CtxError", "EventLoopError", "Hint", "IngestError", "InputError", "InvalidIdError",
        "LLMError", "LLMInterruptedError", "LLMResponseError", "LLMTimeoutError", "LLMUnavailableError",
        "LockTimeoutError", "NotFoundError", "StoreError",
    ),
    ".docs": (
        "DocSummary", "DocumentCheck", "DocumentInfo", "DocumentService", "IndexCheck", "IngestResult", "Outline",
        "OutlineEntry", "SearchHit", "SearchResult", "Window", "WindowChunk",
    ),
    ".docs.arguments": ("FileRead",),
    ".llm.summarizer": ("Pending", "Summary", "Wait"),
    ".memory": (
        "Advice", "Appended", "CompactResult", "Entry", "EntryStatus", "EntryVectorCheck", "ImportResult",
        "JournalCheck", "OpenResult", "RecallResult", "Role", "SessionContents", "SessionInfo", "SessionPage",
        "SessionPrune", "SessionService", "SessionStatus", "UpdateResult",
    ),
    ".store.layout": ("DataDir",),
    ".store.records": ("Record",),
}  # fmt: skip

if TYPE_CHECKING:
    # ``X as X`` is what type checkers take as re-exported (isort would give each its own line).
    # isort: off
    from ._app import open_context as open_context, serve as serve
    from ._config import Config as Config
    from ._context import Context as Context
    from ._progress import Progress as Progress
    from ._errors import (
        ConfigError as ConfigError,
        CtxError as CtxError,
        EventLoopError as EventLoopError,
        Hint as Hint,
        IngestError as IngestError,
        InputError as InputError,
        InvalidIdError as InvalidIdError,
        LLMError as LLMError,
        LLMInterruptedError as LLMInterruptedError,
        LLMResponseError as LLMResponseError,
        LLMTimeoutError as LLMTimeoutError,
        LLMUnavailableError as LLMUnavailableError,
        LockTimeoutError as LockTimeoutError,
        NotFoundError as NotFoundError,
        StoreError as StoreError,
    )
    from .docs import (
        DocSummary as DocSummary,
        DocumentCheck as DocumentCheck,
        DocumentInfo as DocumentInfo,
        DocumentService as DocumentService,
        IndexCheck as IndexCheck,
        IngestResult as IngestResult,
        Outline as Outline,
        OutlineEntry as OutlineEntry,
        SearchHit as SearchHit,
        SearchResult as SearchResult,
        Window as Window,
        WindowChunk as WindowChunk,
    )
    from .docs.arguments import FileRead as FileRead
    from .llm.summarizer import Pending as Pending, Summary as Summary, Wait as Wait
    from .memory import (
        Advice as Advice,
        Appended as Appended,
        CompactResult as CompactResult,
        Entry as Entry,
        EntryStatus as EntryStatus,
        EntryVectorCheck as EntryVectorCheck,
        ImportResult as ImportResult,
        JournalCheck as JournalCheck,
        OpenResult as OpenResult,
        RecallResult as RecallResult,
        Role as Role,
        SessionContents as SessionContents,
        SessionInfo as SessionInfo,
        SessionPage as SessionPage,
        SessionPrune as SessionPrune,
        SessionService as SessionService,
        SessionStatus as SessionStatus,
        UpdateResult as UpdateResult,
    )
    from .store.layout import DataDir as DataDir
    from .store.records import Record as Record
    # isort: on

_HOME = {name: module for module, names in _EXPORTS.items() for name in names}
#: Modules that import nothing POSIX-only: the config and the errors work everywhere.
_PORTABLE = {"._config", "._errors"}

__all__ = sorted([*_HOME, "__version__"])  # type checkers read the ``as`` imports above


def __getattr__(name: str) -> object:
    if name in _HOME and _HOME[name] not in _PORTABLE:
        require_posix()  # before anything imports the store (fcntl): one clear error on Windows
    return load_name(__name__, globals(), _HOME, name)


def __dir__() -> list[str]:
    return sorted(__all__)
