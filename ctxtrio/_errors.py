"""The exception tree of ctxtrio.

Every error the package raises on purpose derives from :class:`CtxError`, and every one
is drawn here, with its home where that is not this module (``tests/test_errors.py``
checks the drawing against the classes)::

    CtxError
    ├── ConfigError          a flag, environment variable or config value is invalid
    ├── EventLoopError       the library was entered from asyncio (or another loop), not trio
    ├── InputError           a caller (usually the model) sent something unusable
    │   ├── InvalidIdError       an id does not match the id pattern
    │   ├── NotFoundError        no such session, entry or document
    │   └── IngestError          a file cannot be ingested (outside the roots, binary, too big, ...)
    │       └── NotTextError         (docs/sandbox.py) its content is binary, not UTF-8 or empty (``.reason``)
    ├── StoreError           the data dir, a journal or the index cannot be read or written
    │   ├── LockTimeoutError     another process held a journal lock past the wait limit
    │   ├── JournalChangedError  (store/results.py) a conditional append found lines past the expected end
    │   ├── JournalExistsError   (store/results.py) an install found the journal already holding records
    │   ├── UnstorableError      (store/journal.py) records no check foresaw could not be encoded; nothing written
    │   ├── DiskFullError        (store/reading.py) no room on the disk for a file (ENOSPC, EDQUOT)
    │   ├── IndexDamagedError    (store/index_errors.py) the index file is corrupt or replaced: heal it
    │   ├── IndexFullError       (store/index_errors.py) no room on the disk for an index update
    │   ├── IndexBusyError       (store/index_errors.py) another process held the index's lock when it was opened
    │   ├── VectorsBusyError     (store/vector_schema.py) another process held the vectors file's lock too long
    │   └── CommitTimeoutError   (docs/repository.py) the writer did not acknowledge a commit in time
    ├── LLMError             the summarizer endpoint failed; callers fall back
    │   ├── LLMUnavailableError  refused, unreachable, or the breaker is open
    │   ├── LLMTimeoutError      no answer within the deadline
    │   │   └── NoFirstTokenError    (llm/_first_token.py) no first token within the wait (``.headers``)
    │   ├── LLMResponseError     an answer that is not usable (5xx, not JSON, error body, empty)
    │   │   └── InputRefusedError    (llm/_wire.py) embeddings refused for an input (400/413/422; 500 twice around a probe): no failure
    │   └── LLMInterruptedError  a stream cut off by the server for another request: retry, no failure
    └── StoppingError        the MCP server is stopping and its shutdown grace cut a request off (server only)

Messages describe the problem in the library's own terms. Where a next step exists, the
error carries a :data:`Hint` (``exc.hint``) naming it; the MCP tool layer turns a hint
into advice about its tools (``tools/advice.py``), so library users never read about
tools they do not have.

Foreign exceptions are translated once, where they enter: ``OSError`` and
``sqlite3.Error`` in ``store/``, httpx errors in ``llm/``, always ``raise ... from exc``.

Trio nurseries wrap whatever their tasks raise in an ``ExceptionGroup``
(``strict_exception_groups``). Every nursery whose errors reach a caller is wrapped in
:func:`one_error`, so a caller gets the one ``CtxError`` that happened, not a group
(never by taking ``exceptions[0]``: a group that holds anything else is left as it is).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = [
    "ConfigError",
    "CtxError",
    "Hint",
    "EventLoopError",
    "IngestError",
    "InputError",
    "InvalidIdError",
    "LLMError",
    "LLMInterruptedError",
    "LLMResponseError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "LockTimeoutError",
    "NotFoundError",
    "StoppingError",
    "StoreError",
    "leaves",
    "lone_error",
    "one_error",
]


#: A next step an error points to: listing what exists, a different way to do it, or making room for it.
Hint: TypeAlias = Literal["list_documents", "list_sessions", "list_entries", "store_as_document", "retry", "free_space"]


class CtxError(Exception):
    """Root of every error ctxtrio raises on purpose; ``hint`` names a next step, if any."""

    def __init__(self, *args: object, hint: Hint | None = None) -> None:
        super().__init__(*args)
        self.hint: Hint | None = hint


class ConfigError(CtxError):
    """A flag, environment variable or config value is invalid."""


class EventLoopError(CtxError, RuntimeError):
    """ctxtrio was entered from an event loop other than trio (asyncio, for instance)."""


class InputError(CtxError):
    """The caller sent something unusable; the message says how to fix it."""


class InvalidIdError(InputError):
    """A session, entry or document id does not match the id pattern."""


class NotFoundError(InputError):
    """No such session, entry or document."""


class IngestError(InputError):
    """A file or text cannot be ingested: outside the roots, not a regular file, too big, binary."""


class StoreError(CtxError):
    """The data dir, a journal or the search index cannot be read or written."""


class LockTimeoutError(StoreError):
    """Another process held a journal lock for longer than the wait limit."""


class LLMError(CtxError):
    """The summarizer endpoint failed; callers fall back to extractive summaries."""


class LLMUnavailableError(LLMError):
    """The endpoint refused or could not be reached, or the circuit breaker is open."""


class LLMTimeoutError(LLMError):
    """The endpoint did not answer within the deadline."""


class LLMResponseError(LLMError):
    """The endpoint answered with something unusable: 5xx, not JSON, an error body, empty content."""


class LLMInterruptedError(LLMError):
    """A streamed answer ended without a finish reason: the server cut it off, mid-answer or
    before its first token, to serve another request (llama-cpp-python's default
    ``interrupt_requests``). The server works: the circuit breaker does not count it, and
    the step is asked again later; the truncated text is never kept."""


class StoppingError(CtxError):
    """The MCP server is stopping, and a request (``resources/read``, ``prompts/get``, ...) did not finish within
    its shutdown grace: the message says so and what to do once the server is back. Raised by the server's
    surface only, never by the library's services; the SDK boundary answers it as an error response."""


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside ``error``'s (nested) exception groups, in order, or ``[error]``."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def lone_error(group: BaseExceptionGroup[BaseException]) -> CtxError | None:
    """The group's only leaf exception (through nested groups) if it is a CtxError, else None."""
    found = leaves(group)
    return found[0] if len(found) == 1 and isinstance(found[0], CtxError) else None


@contextmanager
def one_error(raised_in_body: Sequence[BaseException] = ()) -> Iterator[None]:
    """Wrap a nursery: an exception group whose one leaf is a CtxError re-raises that CtxError.

    So does a group that holds nothing but one exception of ``raised_in_body`` (through groups of
    one): what the caller's own code raised inside an async context manager that runs nurseries
    (``open_context``), which the nurseries wrapped on its way out (a library user's ``except KeyError``
    around ``async with open_context(...)`` caught nothing: it came out as ExceptionGroup(ExceptionGroup(KeyError))).
    That exception may be a group itself (the caller's own nursery's): it comes out as it was raised, not
    inside two more. It keeps its own traceback, cause and context. Groups of several exceptions, or of
    anything else (``Cancelled``, ``KeyboardInterrupt``, a bug in a background task), propagate unchanged.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        mine = _alone_inside(group, raised_in_body)
        lone = mine if mine is not None else lone_error(group)
        if lone is None:
            raise
        context, suppressed = lone.__context__, lone.__suppress_context__
        try:
            raise lone from lone.__cause__
        finally:  # its own context ("during handling of ..."), not the group it was taken out of
            lone.__context__, lone.__suppress_context__ = context, suppressed


def _alone_inside(group: BaseExceptionGroup[BaseException], wanted: Sequence[BaseException]) -> BaseException | None:
    """The exception of ``wanted`` that ``group`` holds alone, through groups of one, or None. A leaf is that
    very object; a group the caller raised (its own nursery's) arrives as a copy: a cancelled scope takes the
    ``Cancelled`` out of what passes it with ``BaseExceptionGroup.split`` (trio/_core/_run.py, CancelScope's exit),
    which derives new groups. So a group is known by its leaves, the same objects in the same order, and the
    caller's own group is what is returned."""
    inner: BaseException = group
    while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
        inner = inner.exceptions[0]
        for raised in wanted:
            if inner is raised or (_same_leaves(inner, raised) and isinstance(raised, BaseExceptionGroup)):
                return raised
    return None


def _same_leaves(one: BaseException, other: BaseException) -> bool:
    mine, theirs = leaves(one), leaves(other)
    return len(mine) == len(theirs) and all(a is b for a, b in zip(mine, theirs, strict=True))
