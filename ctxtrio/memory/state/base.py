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

__all__ = ["Columns", "entry_line", "text_hash"]

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
    superseded_by: dict[int, int]

    def id_of(self, ordinal: int) -> str: ...

    def ordinal_of(self, item_id: str) -> int | None: ...

    def text(self, ordinal: int) -> str: ...


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
