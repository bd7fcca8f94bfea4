"""What the state's views and the state itself share: the columns the views read, and an entry's line and hash. Pure.

:class:`Columns` is a protocol :class:`~ctxtrio.memory.state.columns.SessionState` meets, so the
views (:mod:`.entries`) read the state without importing its module, and both import this one.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from array import array
    from collections.abc import Iterable

    from ...store.records import JSON

__all__ = [
    "ENTRY_ID_FIELDS",
    "LATEST_TS",
    "Columns",
    "all_folds",
    "entry_key",
    "entry_line",
    "entry_of",
    "record_time",
    "strings_of",
    "text_hash",
]

#: A line of an entry's text that starts with ``[`` (after any line break ``str.splitlines`` knows).
_BRACKET_LINE: Final = re.compile(r"(?<=[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029])(?=\[)")


class Columns(Protocol):
    """The columns of a session's state that the views read (:class:`~ctxtrio.memory.state.columns.SessionState`)."""

    seqs: array[int]
    times: array[float]
    tokens: array[int]
    roles: bytearray
    pinned: bytearray
    deleted_flags: bytearray
    live: bytearray
    tags: dict[int, tuple[str, ...]]
    folds: dict[int, tuple[str, ...]]
    merges: dict[int, tuple[int, ...]]
    merged_into: dict[int, int]
    superseded_by: dict[int, int]

    def id_of(self, ordinal: int) -> str: ...

    def ordinal_of(self, item_id: str) -> int | None: ...

    def text(self, ordinal: int) -> str: ...


def all_folds(state: Columns, summary: int) -> tuple[str, ...]:
    """The ids ``summary``'s record folds and, through the summaries it merged, theirs, oldest first.
    Each record lists only what it folded itself, so a long session's journal and state stay linear.
    A summary merged into a later one gives its record's own: each of a chain of merged summaries
    listed all the folds before it, so exporting 3,000 notes compacted every 10 listed 448,500 ids."""
    if summary not in state.merges or summary in state.merged_into:
        return state.folds.get(summary, ())
    found: list[str] = []
    pending = [summary]
    while pending:
        merged = pending.pop()
        found.extend(state.folds.get(merged, ()))
        pending.extend(state.merges.get(merged, ()))
    return tuple(sorted(found, key=lambda folded_id: state.ordinal_of(folded_id) or 0))


def entry_line(item_id: str, role: str, pinned: bool, tags: Iterable[str], text: str) -> str:
    """How recall shows an entry: ``[e12 decision pinned #auth] text`` plus a newline.

    A line of ``text`` that starts with ``[`` is shown indented by two spaces, so in recall's
    answer a line that starts with ``[`` is always an entry's head: a note that quotes recall
    ("[e12 decision pinned] use cookies") or a summary of one read as an entry of its own, and
    a model could not tell where entries start. Only the rendering changes, never the stored text.
    """
    head = f"{item_id} {role} pinned" if pinned else f"{item_id} {role}"
    for tag in tags:
        head += " #" + tag
    return f"[{head}] {_BRACKET_LINE.sub('  ', text)}\n"


def text_hash(text: str) -> int:
    """A stable 64-bit hash of an entry text (stored in snapshots; Python's hash() is per process)."""
    return int.from_bytes(
        hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little", signed=True
    )


def entry_key(entry_id: str, text: str) -> str:
    """An entry's key among the session vectors (``memory/semantic.py``): its id and its text's
    hash, so a vector is never taken for another text under the same id (``e12#5f0c...``)."""
    return f"{entry_id}#{text_hash(text) & 0xFFFFFFFFFFFFFFFF:016x}"


def entry_of(key: str) -> str:
    """The entry id in a key :func:`entry_key` made."""
    return key.partition("#")[0]


#: A record's fields that list entry ids: ``folds`` (the entries a summary folds) and ``merges`` (the summaries
#: a compaction merged). Import remaps them, its check reads them, prune dates their retirement by them.
ENTRY_ID_FIELDS: Final = ("folds", "merges")


def strings_of(value: JSON) -> tuple[str, ...]:
    """The strings of a record's list field (none when it is not a list)."""
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))


#: Latest timestamp a state takes as it is (the end of year 9999, what datetime and gmtime render).
LATEST_TS = 253_402_300_799.0


def record_time(value: object) -> float | None:
    """A record's timestamp as seconds, or None when it is missing or not a time
    (NaN, infinite, negative, past year 9999: written before imports were checked)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return float(value) if 0 <= value <= LATEST_TS else None
