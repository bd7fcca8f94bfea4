"""Entries of a session as views: :class:`Item` (one entry), and the sequence and mapping
views :class:`~ctxtrio.memory.state.columns.SessionState` offers (``order``, ``items``). Pure.

An :class:`Item` holds only its state and its ordinal; every attribute reads the state's
columns, so views are made on demand and cost nothing to keep or drop. The columns are
named by :class:`~.base.Columns`, a protocol :class:`SessionState` meets, so this module
does not import the state module that imports it (no import cycle, TYPE_CHECKING included).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from ..model import ROLES, Entry, EntryStatus, Role
from .base import all_folds, entry_line

if TYPE_CHECKING:
    from .base import Columns

__all__ = ["Item", "ItemMap", "ItemSequence"]


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
        return all_folds(self._state, self.ordinal)

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
        status = self.status
        return Entry(
            self.id,
            self.seq,
            self.role,
            self.text,
            self.tags,
            self.pinned,
            status,
            self.ts,
            self.tokens,
            # Only while it is superseded: a folded entry deleted since keeps the summary in the
            # state (a restore of the summary clears it, so replay stays as it was), but no summary
            # keeps it out of recall, and its summary's undo leaves it deleted.
            self.superseded_by if status == "superseded" else None,
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
