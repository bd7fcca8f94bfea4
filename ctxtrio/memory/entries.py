"""Entries of a session as views: :class:`Item` (one entry), and the sequence and mapping
views :class:`~ctxtrio.memory.state.SessionState` offers (``order``, ``items``), and the
patch that pins, deletes or restores one (:func:`patch_for`). Pure.

An :class:`Item` holds only its state and its ordinal; every attribute reads the state's
columns, so views are made on demand and cost nothing to keep or drop. The columns are
named by :class:`Columns`, a protocol :class:`SessionState` meets, so this module does
not import the state module that imports it (no import cycle, TYPE_CHECKING included).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from .._errors import InputError
from .model import ROLES, Entry, EntryStatus, Role

if TYPE_CHECKING:
    from array import array

    from ..store.records import JSON

__all__ = ["Columns", "Item", "ItemMap", "ItemSequence", "entry_line", "patch_for", "text_hash"]


class Columns(Protocol):
    """The columns of a session's state that the views read (:class:`~ctxtrio.memory.state.SessionState`)."""

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

    def unfoldable(self, summary: Item) -> list[Item]: ...


def entry_line(item_id: str, role: str, pinned: bool, tags: Iterable[str], text: str) -> str:
    """How recall shows an entry: ``[e12 decision pinned #auth] text`` plus a newline."""
    head = f"{item_id} {role} pinned" if pinned else f"{item_id} {role}"
    for tag in tags:
        head += " #" + tag
    return f"[{head}] {text}\n"


def text_hash(text: str) -> int:
    """A stable 64-bit hash of an entry text (stored in snapshots; Python's hash() is per process)."""
    return int.from_bytes(
        hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little", signed=True
    )


class Item:
    """A view of one entry of a session's state (made on demand; equal by position)."""

    __slots__ = ("_state", "ordinal")

    def __init__(self, state: Columns, ordinal: int) -> None:
        self._state = state
        self.ordinal = ordinal

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Item) and other._state is self._state and other.ordinal == self.ordinal

    def __hash__(self) -> int:
        return self.ordinal

    def __repr__(self) -> str:
        return f"Item({self.id!r})"

    @property
    def id(self) -> str:
        return self._state.id_of(self.ordinal)

    @property
    def seq(self) -> int:
        return self._state.seqs[self.ordinal]

    @property
    def ts(self) -> float:
        return self._state.times[self.ordinal]

    @property
    def role(self) -> Role:
        return ROLES[self._state.roles[self.ordinal]]

    @property
    def text(self) -> str:
        return self._state.text(self.ordinal)

    @property
    def tags(self) -> tuple[str, ...]:
        return self._state.tags.get(self.ordinal, ())

    @property
    def pinned(self) -> bool:
        return bool(self._state.pinned[self.ordinal])

    @property
    def deleted(self) -> bool:
        return bool(self._state.deleted_flags[self.ordinal])

    @property
    def superseded_by(self) -> str | None:
        by = self._state.superseded_by.get(self.ordinal)
        return None if by is None else self._state.id_of(by)

    @property
    def folds(self) -> tuple[str, ...]:
        return self._state.folds.get(self.ordinal, ())

    @property
    def tokens(self) -> int:
        return self._state.tokens[self.ordinal]

    @property
    def live(self) -> bool:
        return bool(self._state.live[self.ordinal])

    @property
    def status(self) -> EntryStatus:
        if self.deleted:
            return "deleted"
        return "live" if self.ordinal not in self._state.superseded_by else "superseded"

    def line(self) -> str:
        return entry_line(self.id, self.role, self.pinned, self.tags, self.text)

    def snapshot(self) -> Entry:
        return Entry(
            self.id,
            self.seq,
            self.role,
            self.text,
            self.tags,
            self.pinned,
            self.status,
            self.ts,
            self.tokens,
            self.superseded_by,
            self.folds,
        )


class ItemSequence(Sequence[Item]):
    """Every entry in journal order, as :class:`Item` views."""

    __slots__ = ("_state",)

    def __init__(self, state: Columns) -> None:
        self._state = state

    def __len__(self) -> int:
        return len(self._state.seqs)

    def __getitem__(self, index: int) -> Item:  # type: ignore[override]  # slices are not needed
        count = len(self._state.seqs)
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError(index)
        return Item(self._state, index)

    def __iter__(self) -> Iterator[Item]:
        state = self._state
        return (Item(state, ordinal) for ordinal in range(len(state.seqs)))

    def __reversed__(self) -> Iterator[Item]:
        state = self._state
        return (Item(state, ordinal) for ordinal in range(len(state.seqs) - 1, -1, -1))


class ItemMap(Mapping[str, Item]):
    """Entries by id."""

    __slots__ = ("_state",)

    def __init__(self, state: Columns) -> None:
        self._state = state

    def __getitem__(self, key: str) -> Item:
        ordinal = self._state.ordinal_of(key)
        if ordinal is None:
            raise KeyError(key)
        return Item(self._state, ordinal)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._state.ordinal_of(key) is not None

    def __iter__(self) -> Iterator[str]:
        state = self._state
        return (state.id_of(ordinal) for ordinal in range(len(state.seqs)))

    def __len__(self) -> int:
        return len(self._state.seqs)


def patch_for(
    item: Item, state: Columns, *, pinned: bool | None, delete: bool | None
) -> tuple[dict[str, JSON], tuple[str, ...]]:
    """The patch body that gets ``item`` where asked (empty: it is there already), and what it restores."""
    if pinned is not None:
        if not item.live:
            raise InputError(f"{item.id} is {item.status}: restore it first (restore=true), then pin it")
        return ({"pinned": pinned} if item.pinned != pinned else {}), ()
    if delete is True:
        return ({"deleted": True} if not item.deleted else {}), ()
    if item.folds:  # restoring a summary undoes its compaction
        back = tuple(folded.id for folded in state.unfoldable(item))
        return ({"restored": True} if back or not item.deleted else {}), back
    return ({"restored": True} if not item.live else {}), ((item.id,) if not item.live else ())
