"""Loaded generations: the chunks of current documents kept in memory, by characters, the
least recently used evicted; and a generation file as a summary cache.

:class:`~.repository.Repository` is a :class:`LoadedGenerations`: it supplies the current
entries, the paths and the refresh; this part reads chunks (a loaded generation, single
journal lines, or a whole file) and keeps them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import OrderedDict
from functools import partial
from typing import TYPE_CHECKING

import trio

from .._errors import StoreError
from .chunks import LoadedDoc, StoredChunk, chunk_on_line, load_generation, summary_record
from .ranges import RANGE_MIN_BYTES, chunk_spans

if TYPE_CHECKING:
    from pathlib import Path

    from ..store.handle import StoreHandle
    from .catalog import CatalogState, DocEntry

__all__ = ["DEFAULT_CACHE_CHARS", "GenerationCache", "Key", "LoadedGenerations"]

#: Characters of loaded chunk text kept in memory across documents.
DEFAULT_CACHE_CHARS = 32_000_000

#: (document, generation).
Key = tuple[str, str]


class _GenerationGone(Exception):
    """A generation file is missing or short: another process replaced the document."""


class LoadedGenerations(ABC):
    """Chunks of current generations, loaded and kept (an LRU bounded by characters)."""

    store: StoreHandle
    state: CatalogState

    def __init__(self, cache_chars: int) -> None:
        self._cache_chars = cache_chars
        self._loaded: OrderedDict[Key, LoadedDoc] = OrderedDict()
        self._loaded_chars = 0
        self._loading: dict[Key, trio.Lock] = {}

    @abstractmethod
    def entry(self, doc_id: str) -> DocEntry:
        """The current entry of ``doc_id``, or NotFoundError."""

    @abstractmethod
    async def refresh(self) -> None:
        """Replay what the catalog gained since the last refresh."""

    @abstractmethod
    def gen_path(self, doc_id: str, gen: str) -> Path:
        """The file of a generation."""

    async def load(self, doc_id: str) -> tuple[DocEntry, LoadedDoc]:
        """The current entry and its chunks; re-resolves once if another process replaced it."""
        entry = self.entry(doc_id)
        try:
            return entry, await self._load(entry)
        except _GenerationGone:
            await self.refresh()
            entry = self.entry(doc_id)
            try:
                return entry, await self._load(entry)
            except _GenerationGone as exc:
                raise StoreError(f"document {doc_id!r} is damaged: its chunks are missing ({exc})") from exc

    async def chunks_at(self, wanted: list[tuple[DocEntry, int, int, int]]) -> dict[int, StoredChunk]:
        """Chunks by position in ``wanted``: (entry, chunk index, line start, line end) each.

        From a loaded generation when there is one, else by reading that one journal line
        (a search touches a few chunks of many documents: loading them all would fill the
        cache and take a file read each). Positions it cannot resolve are left out.
        """
        found: dict[int, StoredChunk] = {}
        reads: list[tuple[int, int, Path, int, int]] = []
        for position, (entry, index, start, end) in enumerate(wanted):
            doc = self._loaded.get((entry.doc_id, entry.gen))
            if doc is not None and index < len(doc.chunks):
                found[position] = doc.chunks[index]
            elif end > start:
                reads.append((position, index, self.gen_path(entry.doc_id, entry.gen), start, end))
        if reads:
            spans = [(path, start, end) for _, _, path, start, end in reads]
            records = await self.store.read_lines(spans)
            for (position, index, _, _, _), record in zip(reads, records, strict=True):
                chunk = chunk_on_line(record)
                if chunk is not None and chunk.index == index:
                    found[position] = chunk
        return found

    async def chunk_range(self, entry: DocEntry, first: int, last: int) -> list[StoredChunk]:
        """Chunks ``first`` .. ``last`` of the current generation, in order.

        From the loaded generation when there is one; from their lines alone when the
        file is large (see :mod:`.ranges`), so reading a few chunks of a 50 MB document
        does not load it; else (or if those lines are not exactly the chunks asked for)
        by loading the document.
        """
        doc = self._loaded.get((entry.doc_id, entry.gen))
        if doc is None:
            path = self.gen_path(entry.doc_id, entry.gen)
            try:
                large = (await trio.to_thread.run_sync(path.stat)).st_size >= RANGE_MIN_BYTES
            except OSError:
                large = False
            if large:
                spans = await trio.to_thread.run_sync(partial(chunk_spans, path, first, last - first + 1))
                records = await self.store.read_lines([(path, start, end) for start, end in spans])
                chunks = [chunk_on_line(record) for record in records]
                if [chunk.index if chunk else None for chunk in chunks] == list(range(first, last + 1)):
                    return [chunk for chunk in chunks if chunk is not None]
            entry, doc = await self.load(entry.doc_id)
        return doc.chunks[first : last + 1]

    async def top_up(self, doc: LoadedDoc) -> None:
        """Pick up summary records appended to ``doc``'s file since it was loaded."""
        path = self.gen_path(doc.doc_id, doc.gen)
        _, summaries, end = await trio.to_thread.run_sync(partial(load_generation, self.store, path, start=doc.end))
        doc.summaries.update(summaries)
        doc.end = max(doc.end, end)

    def remember(self, doc: LoadedDoc) -> None:
        """Keep ``doc`` loaded (most recently used), evicting the least recently used."""
        key = (doc.doc_id, doc.gen)
        self._forget_loaded(key)
        self._loaded[key] = doc
        self._loaded_chars += doc.size
        while self._loaded_chars > self._cache_chars and len(self._loaded) > 1:
            _, evicted = self._loaded.popitem(last=False)
            self._loaded_chars -= evicted.size

    def _forget_loaded(self, key: Key) -> None:
        doc = self._loaded.pop(key, None)
        if doc is not None:
            self._loaded_chars -= doc.size

    async def _load(self, entry: DocEntry) -> LoadedDoc:
        key = (entry.doc_id, entry.gen)
        doc = self._loaded.get(key)
        if doc is not None:
            self._loaded.move_to_end(key)
            return doc
        lock = self._loading.setdefault(key, trio.Lock())
        try:
            async with lock:
                doc = self._loaded.get(key)
                if doc is None:
                    path = self.gen_path(entry.doc_id, entry.gen)
                    load = partial(load_generation, self.store, path)
                    chunks, summaries, end = await trio.to_thread.run_sync(load)
                    if len(chunks) != entry.info.chunks or any(c.index != i for i, c in enumerate(chunks)):
                        raise _GenerationGone(f"{path} holds {len(chunks)} of {entry.info.chunks} chunks")
                    doc = LoadedDoc(entry.doc_id, entry.gen, chunks, summaries, end)
                    self.remember(doc)
        finally:
            self._loading.pop(key, None)  # waiters already hold the lock object
        return doc


class GenerationCache:
    """A :class:`~ctxtrio.llm.summarizer.SummaryCache` kept in a generation file.

    With ``read=False`` lookups miss (``refresh``) but results are still stored. A
    result for a generation that is no longer current is kept in memory only, so a
    removed file is never recreated.
    """

    def __init__(self, repo: LoadedGenerations, doc: LoadedDoc, *, read: bool = True) -> None:
        self._repo = repo
        self._doc = doc
        self._read = read

    def get(self, key: str) -> str | None:
        return self._doc.summaries.get(key) if self._read else None

    async def put(self, key: str, text: str) -> None:
        doc = self._doc
        current = self._repo.state.docs.get(doc.doc_id)
        if current is not None and current.gen == doc.gen:
            await self._repo.store.append(self._repo.gen_path(doc.doc_id, doc.gen), [summary_record(key, text)])
        doc.summaries[key] = text
