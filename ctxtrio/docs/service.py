"""Documents: ingest, outline, search, window, summarize, list, forget.

:class:`DocumentService` is the library face of the ``doc_*`` tools: it checks its
arguments (``InputError`` subclasses with messages written for the model), keeps the
catalog in step with other processes (:mod:`.repository`) and returns the frozen
results of :mod:`.model`. Search (:mod:`.searching`) is served by the store's persistent
FTS5 index, filtered to the current generation of each document; nothing is rebuilt per query.
"""

from __future__ import annotations

from dataclasses import replace
from os import PathLike, fspath
from pathlib import PurePath
from typing import TYPE_CHECKING

import trio

from .._errors import InputError, InvalidIdError
from .._locks import CharBudget, Held
from ..llm.summarizer import Summarizer
from ..store.ids import new_id, validate_id
from ..store.records import check_storable, unstorable
from ..text.harmless import one_line
from ..text.kinds import kind_for
from .arguments import FileRead, clean_title, first_line, read_file
from .checking import CheckingMethods
from .ingest import Source, content_hash, write_generation
from .loaded import DEFAULT_CACHE_CHARS
from .model import DocumentInfo, IngestResult
from .offload import OFFLOAD_MIN_CHARS
from .pool import POOL_ALONE_MIN_CHARS, POOL_MIN_CHARS, ChunkPool
from .reading import ReadingMethods
from .repository import CATALOG_NAME, Repository
from .sandbox import check_text
from .searching import SearchingMethods
from .source_lock import hold_source

if TYPE_CHECKING:
    from .._config import Config
    from .._live import Live
    from .._progress import Progress
    from ..store.handle import StoreHandle
    from .embedding import SemanticIndex

__all__ = ["DocumentService", "repository_of"]


class DocumentService(SearchingMethods, ReadingMethods, CheckingMethods):
    """Ingests documents and pages through them; the library face of ``doc_*``.

    Ingest, list and forget are here; search, window, read, outline and summarize are
    its methods too, written in :mod:`.searching` and :mod:`.reading`, and the read-only
    looks at the stored documents ``ctxtrio doctor`` takes (and its index rebuild) in
    :mod:`.checking`.

    ``summarizer`` defaults to an extractive-only one. ``cache_chars`` bounds the chunk
    text kept in memory across loaded documents. Texts shorter than
    ``offload_min_chars`` are chunked in worker threads (``cpu_threads`` at once),
    longer ones in a child process: one of ``pool`` when given (then the default
    threshold is :data:`~.pool.POOL_MIN_CHARS`), else one started for the document.
    An ingest while no other is in flight chunks texts shorter than ``alone_min_chars``
    in threads too (default :data:`~.pool.POOL_ALONE_MIN_CHARS` with a pool).
    """

    def __init__(
        self,
        store: StoreHandle,
        live: Live,
        config: Config,
        summarizer: Summarizer | None = None,
        *,
        cache_chars: int = DEFAULT_CACHE_CHARS,
        cpu_threads: int = 2,
        offload_min_chars: int | None = None,
        alone_min_chars: int | None = None,
        ingest_slots: int = 16,
        ingest_chars: int = 64_000_000,
        pool: ChunkPool | None = None,
    ) -> None:
        self._live = live
        self._config = config
        self._summarizer = summarizer if summarizer is not None else Summarizer(None, live.tokens)
        self._repo = Repository(store, cache_chars=cache_chars)
        self._cursor_locks: dict[tuple[str, str], trio.Lock] = {}
        #: Chunking threads at once: more only fight over the GIL.
        self._cpu = trio.CapacityLimiter(cpu_threads)
        self._pool = pool
        if offload_min_chars is None:
            offload_min_chars = POOL_MIN_CHARS if pool is not None else OFFLOAD_MIN_CHARS
        self._offload_min_chars = offload_min_chars
        if alone_min_chars is None:
            alone_min_chars = POOL_ALONE_MIN_CHARS if pool is not None else offload_min_chars
        self._alone_min_chars = max(offload_min_chars, alone_min_chars)
        #: Ingests past reading at once, and the characters of those past chunking. Each
        #: holds its text, chunks and records until committed; the rest wait their turn
        #: here (backpressure), so memory stays bounded whatever the number of
        #: concurrent ingests, while many small ones still overlap their round trips.
        self._ingest_slots = trio.CapacityLimiter(ingest_slots)
        self._ingest_chars = CharBudget(ingest_chars)
        #: Semantic recall (``--embed-model``), set by ``_wiring.py`` once its task runs.
        self.semantic: SemanticIndex | None = None
        #: Whether a window's session_id names a session (``_wiring.py`` sets it; see ReadingMethods).
        self.sessions = None

    # -- ingest, list, forget -------------------------------------------------------

    async def ingest(
        self,
        *,
        text: str | None = None,
        file_path: str | PathLike[str] | None = None,
        title: str | None = None,
        doc_id: str | None = None,
        progress: Progress | None = None,
    ) -> IngestResult:
        """Chunk, index and commit a document; re-ingesting a ``doc_id`` replaces it atomically.

        Exactly one of ``text`` and ``file_path`` (a str or any ``os.PathLike``, read only under the ingest roots).
        Without ``doc_id``, a file already ingested from the same resolved path replaces
        its earlier document, or, when its content and title are unchanged, is skipped
        (``IngestResult.unchanged``); inline text without ``doc_id`` is a new document.
        ``progress(done_chars, total_chars)`` is awaited after each durable batch.

        Cancelled before its commit is queued, nothing of the document is stored and the
        version before stays current. The commit itself is shielded: once queued it lands,
        and a cancel that arrives meanwhile may still come out of this call as Cancelled
        (:meth:`get` says whether the document is there).
        """
        started = trio.current_time()
        if (text is None) == (file_path is None):
            raise InputError("pass exactly one of text or file_path")
        if doc_id is not None:
            validate_id(doc_id, "doc_id")
            if doc_id == CATALOG_NAME:
                raise InvalidIdError(f"doc_id {CATALOG_NAME!r} is reserved; choose another")
        path = None if file_path is None else fspath(file_path)
        async with Held(self._ingest_slots):  # the store's round trip checkpoints
            return await self._ingest(text, path, title, doc_id, progress, started)

    async def ingest_read(self, file_path: str, read: FileRead) -> IngestResult:
        """:meth:`ingest` of ``file_path`` (no title, no ``doc_id``) from ``read``, the file as
        :func:`~.arguments.read_file` read it: ``ctxtrio ingest``'s precheck reads and hashes each
        file once, not again here. A read made under other roots or another limit than this
        service's is not taken: the file is read again under this service's.
        """
        started = trio.current_time()
        async with Held(self._ingest_slots):
            return await self._ingest(None, file_path, None, None, None, started, read)

    async def _ingest(
        self,
        text: str | None,
        file_path: str | None,
        title: str | None,
        doc_id: str | None,
        progress: Progress | None,
        started: float,
        read: FileRead | None = None,
    ) -> IngestResult:
        limit = self._config.max_ingest_chars
        if file_path is not None:
            if read is None or read.roots != self._config.ingest_roots or read.limit != limit:
                read = await trio.to_thread.run_sync(read_file, file_path, self._config.ingest_roots, limit)
            body, source, digest = read.text, read.source, read.digest
            default_title = _file_title(file_path, source)
        else:
            assert text is not None
            body, source = check_text(text, max_chars=limit), "inline"
            default_title = first_line(text) or "inline text"
            try:
                digest = await content_hash(body)
            except UnicodeEncodeError as exc:  # only inline text: a file's is decoded strictly
                raise unstorable("text") from exc
        shown_title = clean_title(title) or default_title
        check_storable(shown_title, "title")
        found = Source(doc_id or "", shown_title, source, body, digest)
        if doc_id is None and file_path is not None:
            # From the look-up of the file's earlier document to the commit, no other task or
            # process ingests the same file (concurrent runs stored it twice).
            async with hold_source(self._repo.data.docs, source):
                await self._repo.refresh()
                earlier = self._by_source(source)
                if earlier is not None and _unchanged(earlier, digest, shown_title):
                    return IngestResult(earlier, False, trio.current_time() - started, unchanged=True)
                if earlier is not None:
                    found = replace(found, doc_id=earlier.doc_id)
                return await self._commit(self._to_chunk(found, file_path, title), progress, started)
        found = self._to_chunk(found, file_path, title)
        await self._repo.refresh()
        return await self._commit(found, progress, started)

    def _to_chunk(self, found: Source, file_path: str | None, title: str | None) -> Source:
        """``found`` with its kind, once it is known to be chunked (an unchanged file is not: neither
        its kind is sniffed nor are the chunking processes started for it, ``ctxtrio ingest``'s reruns)."""
        if self._pool is not None and len(found.text) >= self._child_min_chars(self._ingest_chars.holders):
            self._pool.warm()  # a text for the chunking processes: start them all (once)
        return replace(found, kind=kind_for(found.text, file_path, title))

    async def _commit(self, read: Source, progress: Progress | None, started: float) -> IngestResult:
        """Chunk and commit ``read`` (a new id when it has none)."""
        if not read.doc_id:
            doc_id = new_id("doc")
            while doc_id in self._repo.state.docs:
                doc_id = new_id("doc")
            read = replace(read, doc_id=doc_id)
        async with self._ingest_chars.hold(len(read.text)):
            info, replaced = await self._write(read, progress)
        if self.semantic is not None:
            self.semantic.wake()  # embedding happens afterwards; the acknowledgement never waits for it
        return IngestResult(info, replaced, trio.current_time() - started)

    async def _write(self, source: Source, progress: Progress | None) -> tuple[DocumentInfo, bool]:
        return await write_generation(
            self._repo,
            source,
            chunk_tokens=self._config.chunk_tokens,
            overlap_tokens=self._config.chunk_overlap_tokens,
            model=self._live.tokens.current,
            progress=progress,
            cpu=self._cpu,
            offload_min_chars=self._child_min_chars(self._ingest_chars.holders - 1),
            pool=self._pool,
            exact=self._live.counter if self._live.counter.kind == "exact" else None,
        )

    def _child_min_chars(self, others: int) -> int:
        """Texts from this long are chunked in a child process, while ``others`` other
        ingests hold characters: alone, a thread costs less than a job does."""
        return self._offload_min_chars if others else self._alone_min_chars

    async def unchanged_file(self, file_path: str, source: str, digest: str) -> DocumentInfo | None:
        """The document :meth:`ingest` would leave as it is for ``file_path`` (no title, no ``doc_id``), or None.

        ``source`` is the file's resolved path, ``digest`` its text's :func:`~.ingest.text_digest`:
        a caller that has read the file already (``ctxtrio ingest``'s precheck) learns
        without a second read that ingesting it would answer ``IngestResult.unchanged``.
        """
        await self._repo.refresh()
        earlier = self._by_source(source)
        return earlier if earlier is not None and _unchanged(earlier, digest, _file_title(file_path, source)) else None

    def _by_source(self, source: str) -> DocumentInfo | None:
        """The most recently ingested current document read from the file ``source``."""
        found = [entry.info for entry in self._repo.state.from_source(source)]
        return max(found, key=lambda info: info.ingested_at) if found else None

    async def list_documents(self) -> list[DocumentInfo]:
        """Every current document, oldest ingest first."""
        await self._repo.refresh()
        return sorted((entry.info for entry in self._repo.state.docs.values()), key=lambda info: info.ingested_at)

    async def changes(self, since: int | None) -> tuple[int, list[str], frozenset[str], frozenset[str] | None]:
        """(the catalog's version now, the documents committed or forgotten since version ``since`` of this
        process's catalog state (None: a first look), those of them current now, and every current document
        only when the changes cannot be told, else None; :meth:`~.catalog.CatalogState.changes`): what a watcher
        needs without a listing at each look."""
        await self._repo.refresh()
        found = self._repo.state.changes(since)
        return found.version, found.changed, found.current, found.listing

    async def get(self, doc_id: str) -> DocumentInfo:
        """What the catalog says about ``doc_id``; NotFoundError if there is no such document."""
        validate_id(doc_id, "doc_id")
        await self._repo.refresh()
        return self._repo.entry(doc_id).info

    async def forget(self, doc_id: str) -> DocumentInfo:
        """Remove a document: its chunks, index rows, cursors and cached summaries.

        The ``forget`` record in the catalog is the commit point; files are removed
        after it (and by the next startup sweep if the process dies first).

        Cancelled before that record is queued, the document stays as it was. Once queued
        it may still be stored: a later call (each reads the catalog first) no longer finds
        the document, and that reading removes its files.
        """
        validate_id(doc_id, "doc_id")
        await self._repo.refresh()
        info = self._repo.entry(doc_id).info
        await self._repo.forget(doc_id)
        if self.semantic is not None:
            self.semantic.wake()  # its vectors go with it
        for key in [key for key in self._cursor_locks if key[0] == doc_id]:
            del self._cursor_locks[key]
        return info


def repository_of(documents: DocumentService) -> Repository:
    """The documents' state in ``documents``' process, for what shares it (the semantic index); internal."""
    return documents._repo


def _file_title(file_path: str, source: str) -> str:
    """The title a file gets when none is given: its name, one harmless line (a file's name may hold ESC or a newline)."""
    return one_line(PurePath(file_path).name or source.rsplit("/", 1)[-1])


def _unchanged(earlier: DocumentInfo, digest: str, title: str) -> bool:
    """Ingesting again what ``earlier`` was read from would change nothing: same text, same title."""
    return earlier.content_hash == digest and earlier.title == title
