"""The entry an id names (:func:`entry_named`) and the patch that pins, deletes or restores it (:func:`patch_for`). Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._errors import InputError, NotFoundError

if TYPE_CHECKING:
    from ...store.records import JSON
    from .columns import SessionState
    from .entries import Item

__all__ = ["entry_named", "folding_after", "folds_now", "patch_for"]


def entry_named(state: SessionState, entry_id: str) -> Item:
    """The entry ``entry_id`` names: its id, else the one id equal to it but for case ("E12": recall shows
    "[e12 note]", and a model often capitalizes it); none: NotFoundError, saying "e12" for a bare "12"."""
    item = state.items.get(entry_id)
    if item is not None:
        return item
    folded = entry_id.casefold()
    alike = [state.items[known] for known in state.items if known.casefold() == folded]
    if len(alike) == 1:
        return alike[0]
    numbered = f" (entry ids start with e: e{entry_id})" if entry_id.isdigit() and f"e{entry_id}" in state.items else ""
    raise NotFoundError(f"session {state.session_id!r} has no entry {entry_id!r}{numbered}", hint="list_entries")


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


def folding_after(item: Item, state: SessionState, folded_into: str | None) -> tuple[str | None, tuple[str, ...]]:
    """After an update of ``item`` (``folded_into``: the summary that superseded it before, if any):
    that summary if it is live, and the entries that summary (or ``item``, a summary) still supersedes.

    A restored entry stays in its summary's text, which is never rewritten: the answer says so,
    and names the restore that undoes the rest (a model saw the entry twice in recall, unsaid)."""
    summary = state.items.get(folded_into) if folded_into is not None else (item if item.folds else None)
    if summary is None or (summary is not item and summary.status != "live"):
        return None, ()
    still = tuple(folded.id for folded in state.unfoldable(summary))
    return (None if summary is item else summary.id), still


def folds_now(item: Item, state: SessionState) -> tuple[tuple[str, str], ...]:
    """For ``item``, a deleted summary: each entry it folded and where it is now, ``live``, ``deleted`` or the
    id of the summary folding it (``item`` itself when it was deleted without an undo). A second restore
    answered "e42 unchanged (deleted)", which does not say the undo happened or what came back."""
    if not (item.folds and item.deleted):
        return ()
    now: list[tuple[str, str]] = []
    for folded_id in item.folds:
        folded = state.items.get(folded_id)
        if folded is None:
            continue
        by = folded.superseded_by
        now.append((folded_id, "deleted" if folded.deleted else by if by is not None else "live"))
    return tuple(now)


def merged_into(item: Item, state: SessionState) -> str | None:
    """The summary whose compaction merged ``item`` (a summary it retired), if one did. Restoring such a
    summary changes nothing, and its answer said "e14 was undone already" of one nobody undid."""
    by = state.merged_into.get(item.ordinal)
    return None if by is None else state.order[by].id
