"""The current documents by journal, kept in step with the catalog one change at a time.

Every search, the background embedder's passes and the startup sweep ask
:meth:`~.repository.Repository.current_journals`: journal name -> entry, for every current
document. It was rebuilt from every entry after each catalog change, on the event loop: at
20,000 documents 29-120 ms a rebuild (a name made per entry, then the dict), and during a team's
bulk ingest the catalog changes between nearly every two searches, so that was paid per
search, stalling every other request meanwhile; each search then also summed every entry's
chunks (``stress/busy_search.py``).

:class:`CurrentJournals` makes each new view from the last one instead: a copy of the dict (a
C-level copy, no name made) with the documents the catalog changed since put right
(:meth:`~.catalog.CatalogState.changed_since`: an ingest, a replace or a forget), and the chunk
total moved by theirs. A view handed out is never changed afterwards: callers keep it across
awaits as the snapshot their search or pass started from. Built from every entry again only for
a state replayed afresh (a rewritten catalog) or more than :data:`_PATCHED` changes behind.

Order: a document ingested again moves to the end of the view (the rebuild kept its place).
Nothing reads the view's order but the embedder's pass, which sorts by ingest time and only
breaks ties by it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from .catalog import CatalogState, DocEntry

__all__ = ["CurrentJournals"]

#: Past this many catalog changes since the last view, the next one is built from every entry.
_PATCHED = 1000


class CurrentJournals:
    """Journal -> entry of one :class:`~.catalog.CatalogState`'s current documents, as of one of its versions, and
    their chunks in all; ``journal`` names an entry's journal."""

    def __init__(self, journal: Callable[[DocEntry], str]) -> None:
        self._journal = journal
        self._state: CatalogState | None = None
        self._version = -1
        self._view: dict[str, DocEntry] = {}
        #: Document -> its journal in ``_view`` (what a change to it removes).
        self._of_doc: dict[str, str] = {}
        self._chunks = 0

    def view(self, state: CatalogState) -> Mapping[str, DocEntry]:
        """Journal -> entry for every current document of ``state`` as it stands (do not change it)."""
        self._catch_up(state)
        return self._view

    def chunks(self, state: CatalogState) -> int:
        """How many chunks ``state``'s current documents hold in all."""
        self._catch_up(state)
        return self._chunks

    def _catch_up(self, state: CatalogState) -> None:
        if state is self._state and state.version == self._version:
            return
        if state is not self._state or state.version - self._version > _PATCHED:
            self._build(state)
            return
        view = dict(self._view)  # (a new one: the last is someone's snapshot)
        for doc in state.changed_since(self._version):
            old = self._of_doc.pop(doc, None)
            if old is not None:
                self._chunks -= view.pop(old).info.chunks
            entry = state.docs.get(doc)
            if entry is not None:
                journal = self._of_doc[doc] = self._journal(entry)
                view[journal] = entry
                self._chunks += entry.info.chunks
        self._view, self._version = view, state.version

    def _build(self, state: CatalogState) -> None:
        self._of_doc = {doc: self._journal(entry) for doc, entry in state.docs.items()}
        self._view = {self._of_doc[doc]: entry for doc, entry in state.docs.items()}
        self._chunks = sum(entry.info.chunks for entry in state.docs.values())
        self._state, self._version = state, state.version
