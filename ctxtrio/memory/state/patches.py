"""The patch that pins, deletes or restores one entry (:func:`patch_for`). Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._errors import InputError

if TYPE_CHECKING:
    from ...store.records import JSON
    from .columns import SessionState
    from .entries import Item

__all__ = ["patch_for"]


def patch_for(
    item: Item, state: SessionState, *, pinned: bool | None, delete: bool | None
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
