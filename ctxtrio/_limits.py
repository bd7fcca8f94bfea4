"""Every numeric bound on an argument, and the one check that enforces them.

The services check their arguments with :func:`check_range`, once: library users get the
same InputError the model does. The tool table advertises the same :class:`Bounds` as
``minimum``/``maximum`` in each tool's schema, so the text the model reads and the rule
the service applies cannot drift apart. The CLI validates ``--budget`` against
:data:`BUDGET` too.

Where a tool calls an argument by another name than the library (``from`` for
``start``), the tool wraps the service call in :func:`calling`, and the service's own
check names the argument as the tool's caller does.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ._errors import InputError

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = [
    "BUDGET",
    "CHUNK_INDEX",
    "COMPACT_TARGET",
    "KEEP_RECENT",
    "LIST_LIMIT",
    "LIST_OFFSET",
    "MAX_TAGS",
    "OUTLINE_CHUNKS",
    "QUERY_CHARS",
    "RECALL_LIMIT",
    "SEARCH_LIMIT",
    "SEARCH_WORDS",
    "SUMMARY_TARGET",
    "Bounds",
    "called",
    "calling",
    "check_budget",
    "check_range",
]


@dataclass(frozen=True, slots=True)
class Bounds:
    """An inclusive integer range; ``high`` None means unbounded above."""

    low: int
    high: int | None = None

    def __contains__(self, value: int) -> bool:
        return value >= self.low and (self.high is None or value <= self.high)

    def describe(self) -> str:
        return f"between {self.low} and {self.high}" if self.high is not None else f"{self.low} or more"


#: Tokens a read may pack (recall, search, window) and the default budget of the CLI.
BUDGET: Final = Bounds(50, 100_000)
#: Entries context_recall lists.
RECALL_LIMIT: Final = Bounds(1, 200)
#: Newest entries context_compact leaves alone.
KEEP_RECENT: Final = Bounds(0, 500)
#: Size of a compaction summary.
COMPACT_TARGET: Final = Bounds(50, 20_000)
#: Chunks doc_search returns.
SEARCH_LIMIT: Final = Bounds(1, 50)
#: doc_search uses the first this many distinct words of its query. A pasted passage still
#: pins its place (chunks holding all of them come first), while every further word
#: widens the last step, "any word", which ranks every chunk holding one: at 10,000
#: documents (``stress/scale.py``'s store) 16 common words take ~0.2 s, 2,000 took 45 s.
SEARCH_WORDS: Final = 16
#: Only this many characters of a doc_search query are read for its words.
QUERY_CHARS: Final = 8_000
#: Chunks doc_outline lists per call.
OUTLINE_CHUNKS: Final = Bounds(1, 500)
#: Size of a document summary.
SUMMARY_TARGET: Final = Bounds(50, 8000)
#: A chunk index (``from``, ``to``).
CHUNK_INDEX: Final = Bounds(0)
#: Where a page of a listing starts, and how many a library caller may ask for at once.
LIST_OFFSET: Final = Bounds(0)
LIST_LIMIT: Final = Bounds(1)
#: Tags on one session entry.
MAX_TAGS: Final = 10


#: The library's argument names -> the names the caller uses, in the task that calls (see :func:`calling`).
_CALLED: ContextVar[Mapping[str, str]] = ContextVar("ctxtrio_argument_names", default={})


@contextmanager
def calling(**names: str) -> Iterator[None]:
    """Inside this block, argument errors name ``start`` as ``names["start"]`` (and so on).

    For a tool whose arguments the library calls otherwise (``calling(start="from",
    end="to")`` around a ``doc_window`` call): the service checks once, in the caller's words.
    """
    token = _CALLED.set(names)
    try:
        yield
    finally:
        _CALLED.reset(token)


def called(name: str) -> str:
    """What the caller calls the library's argument ``name`` (itself, outside :func:`calling`)."""
    return _CALLED.get().get(name, name)


def check_range(name: str, value: int | None, bounds: Bounds) -> None:
    """Raise InputError unless ``value`` is None or an integer within ``bounds`` (named as the caller does)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value not in bounds:
        raise InputError(f"{called(name)} must be {bounds.describe()}, got {value!r}")


def check_budget(budget_tokens: int | None, default: int) -> int:
    """The budget to pack into: ``budget_tokens`` within :data:`BUDGET`, else ``default``."""
    check_range("budget_tokens", budget_tokens, BUDGET)
    return default if budget_tokens is None else budget_tokens
