"""Which current documents' files a query's owner words name, looked up by name (for :mod:`.definition_rows`).

A member a query's words spell of an owner they name is also looked for in the files the owner names: by
their stems and folders (:func:`~.defined.file_names`: ``subprocess.py``, Go's package ``strconv/``). Asking
every document for its names on each such search grew with the library and, past the cache ``file_names``
had (16,384 documents), missed it every time: 209 ms an owned member at 20,000 documents, on the event loop.

:class:`FileOwners` maps each name to the journals of the files it names instead. It is built once, from a
copy of the catalog's entries, in a thread, the first time a search asks; then kept in step with the catalog
by the documents each of its versions changed (:meth:`~.catalog.CatalogState.changed_since`: an ingest, a
replace or a forget costs one document's names); a state replayed afresh (a rewritten catalog), or one more
than :data:`_CAUGHT_UP_ON_LOOP` changes ahead, is built again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from .defined import file_names

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable

    from .catalog import CatalogState, DocEntry

__all__ = ["FileOwners"]

#: How many catalog changes :meth:`FileOwners.journals` catches up on the event loop (each one document's names,
#: ~14 us here); past that :meth:`FileOwners.build` reads every entry's names again in a thread.
_CAUGHT_UP_ON_LOOP = 1000


class FileOwners:
    """Name → the journals of the current documents whose file it names (:func:`~.defined.file_names`), for
    one :class:`~.catalog.CatalogState`, as of one of its versions; ``journal`` names an entry's journal."""

    def __init__(self, journal: Callable[[DocEntry], str]) -> None:
        self._journal = journal
        self._lock = trio.Lock()
        self._state: CatalogState | None = None
        self._version = -1
        #: Document → the journal of its current entry and that entry's file names.
        self._of_doc: dict[str, tuple[str, frozenset[str]]] = {}
        #: Name → the journals of the files it names.
        self._journals: dict[str, set[str]] = {}

    async def build(self, state: CatalogState) -> None:
        """Make the map ``state``'s, reading every entry's names in a thread, unless it is already and at most
        :data:`_CAUGHT_UP_ON_LOOP` changes behind (then at once). The entries are copied on the event loop, where
        the catalog changes, so the thread reads no dict that changes under it; what changes meanwhile is caught
        up by :meth:`journals`. Cancelled: the map is as it was (the thread's work is abandoned with it)."""
        async with self._lock:  # concurrent searches build once
            if state is self._state and state.version - self._version <= _CAUGHT_UP_ON_LOOP:
                return
            version, entries = state.version, list(state.docs.values())
            of_doc, by_name = await trio.to_thread.run_sync(self._mapped, entries, abandon_on_cancel=True)
            self._state, self._version, self._of_doc, self._journals = state, version, of_doc, by_name

    def journals(self, state: CatalogState, names: Collection[str]) -> set[str]:
        """The journals of ``state``'s current documents (as it stands now) whose file names hold one of
        ``names``. :meth:`build` must have made the map ``state``'s."""
        if state is not self._state:
            raise RuntimeError("FileOwners.journals before build for this catalog state")
        if state.version != self._version:
            self._catch_up(state)
        found: set[str] = set()
        for name in names:
            found |= self._journals.get(name, set())
        return found

    def _catch_up(self, state: CatalogState) -> None:
        """Bring the map from its version to ``state``'s: each document changed since gives up its old
        journal's names and adds its current entry's, if it has one (not forgotten)."""
        changed = state.changed_since(self._version)
        for doc in changed:
            old = self._of_doc.pop(doc, None)
            if old is not None:
                for name in old[1]:
                    held = self._journals[name]
                    held.discard(old[0])
                    if not held:
                        del self._journals[name]
            entry = state.docs.get(doc)
            if entry is not None:
                journal, names = self._names_of((entry,))[doc]
                self._of_doc[doc] = journal, names
                for name in names:
                    self._journals.setdefault(name, set()).add(journal)
        self._version = state.version

    def _names_of(self, entries: Iterable[DocEntry]) -> dict[str, tuple[str, frozenset[str]]]:
        return {
            entry.doc_id: (self._journal(entry), file_names(entry.info.title, entry.info.source)) for entry in entries
        }

    def _mapped(self, entries: Iterable[DocEntry]) -> tuple[dict[str, tuple[str, frozenset[str]]], dict[str, set[str]]]:
        """Every entry's journal and names, and the map from each name to its journals (blocking: in a thread)."""
        of_doc = self._names_of(entries)
        by_name: dict[str, set[str]] = {}
        for journal, names in of_doc.values():
            for name in names:
                by_name.setdefault(name, set()).add(journal)
        return of_doc, by_name
