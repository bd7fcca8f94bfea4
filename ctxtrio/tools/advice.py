"""Advice about the tools, added to an error's message at the tool boundary.

Library errors describe the problem in the library's terms and name the next step as a
:data:`~ctxtrio._errors.Hint`; only here does a hint become a sentence about MCP tools,
so a library user never reads "call doc_list" and the model always does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .._errors import CtxError, Hint

__all__ = ["advised"]

_ADVICE: Final[dict[Hint, str]] = {
    "list_documents": "doc_list shows the documents",
    "list_sessions": "context_list_sessions shows existing ones, context_open creates one",
    "list_entries": "context_recall shows entry ids",
    "store_as_document": "doc_ingest stores a document",
    "retry": "call {tool} again",
}


def advised(exc: CtxError, tool: str) -> str:
    """The error's message for the model: the library message plus advice for its hint."""
    message = str(exc)
    if exc.hint is None:
        return message
    return f"{message}; {_ADVICE[exc.hint].format(tool=tool)}"
