"""The :class:`Context` that ``open_context`` hands to library users.

Defined apart from ``_wiring.py`` (which builds it) so its users can depend on the type
without depending on the wiring. The handles the server runs on (the store, the live
token settings, the summarizer, the LLM client) are not part of it: they sit beside it in
the internal :class:`~ctxtrio._wiring.Wiring`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._config import Config
from .docs.service import DocumentService
from .memory.service import SessionService
from .store.layout import DataDir

__all__ = ["Context"]


@dataclass(frozen=True, slots=True)
class Context:
    """Everything one open ctxtrio instance offers. Valid inside ``open_context`` only."""

    config: Config
    #: The data dir's paths (``data.root`` is the directory itself).
    data: DataDir
    sessions: SessionService
    documents: DocumentService
