"""Sessions: durable working memory (the library face of the context_* tools)."""

from .admin.archive import ImportResult
from .admin.prune import SessionPrune
from .model import (
    Advice,
    Appended,
    CompactResult,
    Entry,
    EntryStatus,
    EntryVectorCheck,
    JournalCheck,
    OpenResult,
    RecallResult,
    Role,
    SessionContents,
    SessionInfo,
    SessionPage,
    SessionStatus,
    UpdateResult,
)
from .render import entry_counts
from .service import SessionService

__all__ = [
    "Advice",
    "Appended",
    "CompactResult",
    "Entry",
    "EntryStatus",
    "EntryVectorCheck",
    "ImportResult",
    "JournalCheck",
    "OpenResult",
    "RecallResult",
    "Role",
    "SessionContents",
    "SessionInfo",
    "SessionPage",
    "SessionPrune",
    "SessionService",
    "SessionStatus",
    "UpdateResult",
    "entry_counts",
]
