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

__all__ = ["advised", "advised_read"]

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
    # A model read "No space left on device" and retried, or gave up on the session; the user can act.
    "free_space": (
        (
            "",
            "nothing was stored, reading still works: ask the user to free space on the data dir's disk, then call {tool} again",
        ),
    ),
}


#: What a refused ``resources/read`` says first: whoever reads resources can list them, tools or not.
_LISTED: Final[dict[Hint, str]] = {
    "list_documents": "resources/list names every document",
    "list_sessions": "resources/list names every session",
}


def advised(exc: CtxError, tool: str, offered: Collection[str] | None = None) -> str:
    """The error's message for the model: the library message plus advice for its hint, naming only
    tools in ``offered`` (None: every tool of the full profile)."""
    return "; ".join(part for part in (str(exc), _advice(exc, tool, offered)) if part)


def advised_read(exc: CtxError, request: str, offered: Collection[str] | None = None) -> str:
    """The message of a refused resource or prompt request (``request``: ``resources/read``, ...): for a
    read, the listing that names what can be read, then the tools' advice, since the model a host shows
    resources to has the tools too (a read refused without a next step left it guessing URIs)."""
    listed = _LISTED.get(exc.hint) if exc.hint is not None and request == "resources/read" else None
    return "; ".join(part for part in (str(exc), listed, _advice(exc, request, offered)) if part)


def _advice(exc: CtxError, tool: str, offered: Collection[str] | None) -> str | None:
    if exc.hint is None:
        return None
    for needs, advice in _ADVICE[exc.hint]:
        if not needs or offered is None or needs in offered:
            return advice.format(tool=tool)
    return None
