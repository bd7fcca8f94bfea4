"""Documents as stored: :class:`CheckingMethods`, what ``ctxtrio doctor`` and ``ingest`` read of DocumentService.

Each reads the catalog journal as it is on disk now, through the store's handle: nothing
is replayed into the service's state and the folders are not swept (a service's first
refresh does that, and a check must change nothing). Every commit counts here, even one
whose file does not reach the end it names (which a service's replay skips: see
:mod:`.catalog`), so such a file is reported short. Only :meth:`CheckingMethods.rebuild_index`
writes, through the store writer, one journal at a time, so servers on the same data dir
keep searching.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import trio

from .catalog import CatalogState
from .model import DocumentCheck, IndexCheck

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..store.reading import ReadResult
    from .model import DocumentInfo
    from .repository import Repository

__all__ = ["CheckingMethods"]


class CheckingMethods:
    """Read-only looks at the stored documents, and the index rebuild: methods of
    :class:`~ctxtrio.docs.service.DocumentService`."""

    _repo: Repository

    async def committed_documents(self) -> list[DocumentInfo]:
        """Every current document as the catalog journal says right now, oldest ingest first.

        Unlike :meth:`list_documents`, read as stored: this process's state is not
        refreshed and nothing is swept (``ctxtrio ingest`` counting what a cancelled run committed).
        """
        state, _ = await self._read_catalog()
        return sorted((entry.info for entry in state.docs.values()), key=lambda info: info.ingested_at)

    async def check_journals(self) -> DocumentCheck:
        """Read the catalog and every current document's journal as stored; count chunks and damage.

        Nothing is loaded into memory or written (``ctxtrio doctor``'s check).
        """
        state, catalog = await self._read_catalog()
        repo = self._repo
        journals: dict[str, int] = {}
        short: list[tuple[str, int, int]] = []
        torn, malformed = int(bool(catalog.torn_tail_bytes)), len(catalog.quarantined)
        for entry in state.docs.values():
            path = repo.gen_path(entry.doc_id, entry.gen)
            read = await repo.store.read(path)
            torn += bool(read.torn_tail_bytes)
            malformed += len(read.quarantined)
            chunks = sum(1 for record in read.records if record.kind == "chunk")
            if chunks < entry.info.chunks:
                short.append((entry.doc_id, chunks, entry.info.chunks))
            journals[repo.journal(entry)] = entry.info.chunks
        return DocumentCheck(journals, torn, malformed, tuple(short))

    async def check_index(self) -> IndexCheck:
        """The search index's rows beside the current documents' chunks (read only)."""
        return await self._index_beside(await self._current_journals())

    async def rebuild_index(self) -> IndexCheck:
        """Index every current document's journal again from its file and drop the rows of journals gone.

        Through the store writer, one journal at a time; returns the index as it is after.
        """
        journals = await self._current_journals()
        before = await self._index_beside(journals)
        root = self._repo.data.root
        for name in journals:
            await self._repo.store.reindex(root / name)
        for name in before.stale:
            await self._repo.store.remove(root / name)  # the file is gone already: drops its rows
        after = await self._index_beside(journals)
        return replace(after, rebuilt=len(journals), dropped=len(before.stale))

    async def _read_catalog(self) -> tuple[CatalogState, ReadResult]:
        catalog = await self._repo.store.read(self._repo.catalog_path)
        state = CatalogState()
        for record in catalog.records:
            state.apply(record.data)
        return state, catalog

    async def _current_journals(self) -> dict[str, int]:
        """Current generation journal name -> chunks the catalog promises."""
        state, _ = await self._read_catalog()
        return {self._repo.journal(entry): entry.info.chunks for entry in state.docs.values()}

    async def _index_beside(self, journals: Mapping[str, int]) -> IndexCheck:
        inventory = await self._repo.store.inventory()
        root = self._repo.data.root
        behind = tuple(name for name, chunks in journals.items() if inventory.get(name, (0, 0))[1] != chunks)
        stale = await trio.to_thread.run_sync(
            lambda: tuple(name for name in inventory if name not in journals and not (root / name).exists())
        )
        rows = sum(inventory.get(name, (0, 0))[1] for name in journals)
        return IndexCheck(len(journals), len(inventory), rows, behind, stale)
