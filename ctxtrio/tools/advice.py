"""Advice about the tools, added to an error's message at the tool boundary.

Library errors describe the problem in the library's terms and name the next step as a
:data:`~ctxtrio._errors.Hint`; only here does a hint become a sentence about MCP tools,
so a library user never reads "call doc_list" and the model always does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Collection

    from .._errors import CtxError, Hint

__all__ = ["advised"]

#: Each hint's advice, as (the tool it needs, the sentence), first choice first: a profile that does
#: not offer the tool (``--tools compact`` has no context_open, doc_list, context_recall) gets the next
#: advice it can follow, else none. A model told to call a tool it lacks gets "there is no tool".
_ADVICE: Final[dict[Hint, tuple[tuple[str, str], ...]]] = {
    "list_documents": (
        ("doc_list", "doc_list shows the documents"),
        ("doc_read", "doc_read with a query and no doc_id searches every document"),
    ),
    "list_sessions": (
        ("context_list_sessions", "context_list_sessions shows existing ones, context_open creates one"),
        ("memory", "memory with a note creates the session"),
    ),
    "list_entries": (("context_recall", "context_recall shows entry ids"), ("memory", "memory shows entry ids")),
    "store_as_document": (("doc_ingest", "doc_ingest stores a document"),),
    "retry": (("", "call {tool} again"),),
}


def advised(exc: CtxError, tool: str, offered: Collection[str] | None = None) -> str:
    """The error's message for the model: the library message plus advice for its hint, naming only
    tools in ``offered`` (None: every tool of the full profile)."""
    message = str(exc)
    if exc.hint is None:
        return message
    for needs, advice in _ADVICE[exc.hint]:
        if not needs or offered is None or needs in offered:
            return f"{message}; {advice.format(tool=tool)}"
    return message
