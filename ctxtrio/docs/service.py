"""Documents: ingest, outline, search, window, summarize, list, forget.

:class:`DocumentService` is the library face of the ``doc_*`` tools: it checks its
arguments (``InputError`` subclasses with messages written for the model), keeps the
catalog in step with other processes (:mod:`.repository`) and returns the frozen
results of :mod:`.model`. Search is served by the store's persistent FTS5 index,
filtered to the current generation of each document; nothing is rebuilt per query.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import PurePath
from typing import TYPE_CHECKING

import trio

from .._errors import InputError, InvalidIdError
from .._limits import SEARCH_LIMIT, check_budget, check_range
from .._locks import CharBudget, Held
from ..llm.summarizer import Summarizer
from ..store.ids import new_id, validate_id
from ..store.records import check_storable, unstorable
from ..text.harmless import one_line
from ..text.kinds import kind_for
from ..text.neighbours import alike_of, counted_first
from ..text.words import rarity_weights
from .arguments import FileRead, clean_title, first_line, read_file
from .checking import CheckingMethods
from .continuation import entry_starts_first, with_continuation
from .hybrid import FUSE_DEPTH
from .ingest import Source, content_hash, write_generation
from .loaded import DEFAULT_CACHE_CHARS
from .model import DocumentInfo, IngestResult, SearchHit, SearchResult
from .offload import OFFLOAD_MIN_CHARS
from .packing import least_hit_tokens, pack_hits
from .pool import POOL_ALONE_MIN_CHARS, POOL_MIN_CHARS, ChunkPool
from .reading import ReadingMethods
from .render import render_search, search_head, search_too_small
from .repository import CATALOG_NAME, Repository
from .sandbox import check_text
from .search import definitions_first, find_candidates, load_tables, rerank_fused, search_words
from .source_lock import hold_source

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._config import Config
    from .._live import Live
    from .._progress import Progress
    from ..store.handle import StoreHandle
    from .embedding import SemanticIndex

__all__ = ["DocumentService", "repository_of"]


class DocumentService(ReadingMethods, CheckingMethods):
    """Ingests documents and pages through them; the library face of ``doc_*``.

    Ingest, list, forget and search are here; window, read, outline and summarize are
    its methods too, written in :mod:`.reading`, and the read-only looks at the stored
    documents ``ctxtrio doctor`` takes (and its index rebuild) in :mod:`.checking`.

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
        file_path: str | None = None,
        title: str | None = None,
        doc_id: str | None = None,
        progress: Progress | None = None,
    ) -> IngestResult:
        """Chunk, index and commit a document; re-ingesting a ``doc_id`` replaces it atomically.

        Exactly one of ``text`` and ``file_path`` (read only under the ingest roots).
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
        async with Held(self._ingest_slots):  # the store's round trip checkpoints
            return await self._ingest(text, file_path, title, doc_id, progress, started)

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

    async def changes(self, since: int) -> tuple[int, list[str], list[str]]:
        """(the catalog's version now, the documents committed or forgotten since version
        ``since`` of this process, the current document ids): what a watcher needs without
        listing every document each time."""
        await self._repo.refresh()
        state = self._repo.state
        return state.version, sorted(state.changed_since(since)), list(state.docs)

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

    # -- reading ----------------------------------------------------------------------

    async def search(
        self, query: str, *, doc_id: str | None = None, budget_tokens: int | None = None, limit: int = 10
    ) -> SearchResult:
        """The best-matching chunks of one document or all, re-ranked by their best passage
        (:func:`~.ranking.rerank`), packed into the budget as passages (:func:`~.packing.pack_hits`)."""
        budget = check_budget(budget_tokens, self._live.budget_tokens)
        check_range("limit", limit, SEARCH_LIMIT)
        if doc_id is not None:
            validate_id(doc_id, "doc_id")
        if not query.strip():
            raise InputError("query is empty: give the distinctive words to look for")
        query_terms, left_out = search_words(query)
        if not query_terms:
            raise InputError(
                "query has no searchable words (only punctuation or common stopwords); use distinctive words"
            )
        await self._repo.refresh()
        if doc_id is not None:
            entry = self._repo.entry(doc_id)
            by_journal = {self._repo.journal(entry): entry}
        else:
            by_journal = self._repo.current_journals()
        if not by_journal:
            nothing = SearchResult(query, (), 0, False, budget, 0, left_out)
            return replace(nothing, rendered=render_search(nothing))
        semantic = self.semantic
        meaning = None
        if semantic is not None:
            journals = None if doc_id is None else list(by_journal)
            meaning = partial(semantic.nearest, query, journals, max(limit + 1, FUSE_DEPTH))
        expand_words = self._config.query_expansion
        # The plain words' other forms and thesaurus words are counted with the terms: one trip to the index, not two.
        if expand_words:
            await load_tables()
        rows, counted = await _counts_of(
            self._repo, query_terms, counted_first(query, query_terms) if expand_words else ()
        )
        found = await find_candidates(
            self._repo,
            query_terms,
            by_journal,
            limit,
            all_docs=doc_id is None,
            meaning=meaning,
            query=query,
            expand_words=expand_words,
            counts=counted,
            rows=rows,
        )
        more, skipped = found.more, found.semantic_skipped
        # The thesaurus's words the search looked for, for the passages (a share of their word's).
        alike = alike_of(found.words)
        candidates = found.candidates
        if found.by_words:  # a paraphrase keeps the order semantic recall gave it (docs/hybrid.py)
            candidates = await trio.to_thread.run_sync(partial(rerank_fused, candidates, query_terms, alike, query))
            candidates = definitions_first(candidates, query_terms, query)  # find_candidates put them first before
        # the pool re-ranked (search.pool), cut to limit; an entry's start comes above its continuation, and
        # a definition cut by its chunk's end brings the next chunk
        candidates = entry_starts_first(candidates, query_terms)
        candidates = await with_continuation(self._repo, candidates, query_terms, query, limit, by_journal)
        also = {word: counted.get(word, 0) for _, words in alike for word in words}
        rarity = rarity_weights({term: counted.get(term, 0) for term in query_terms}, rows, also)
        model = self._live.tokens.current
        # The head line's cost at its longest (every clause, large numbers), kept out of the hits' room.
        widest = SearchResult(
            query, (SearchHit("", "", 0, (), 0.0, "", 0, cut=True),), 99, more, budget, budget, left_out, skipped, True
        )
        head_tokens = model.estimate(search_head(widest)) + 1

        def build(room: int, estimated: bool) -> SearchResult:
            packed, omitted, used = pack_hits(candidates, max(1, room - head_tokens), model, query_terms, rarity, alike)
            marked = estimated and bool(packed)
            if not estimated:  # grown past the budget by a tokenizer counting less: say no more than it holds
                used = min(used, max(1, budget - head_tokens))
            return SearchResult(query, tuple(packed), omitted, more, budget, used, left_out, skipped, marked)

        # The final check, in the model's own tokens when the server can count; the text
        # counted, its "estimated" mark inside, is the answer. An answer counted well under
        # the budget is packed again larger (grow: the parts' rounded-up sums, the widest head).
        fitted = await self._live.counter.fit_marked(budget, build, render_search, grow=True)
        if candidates and (fitted.tokens > budget or not fitted.result.hits):  # the head left a hit no room
            raise InputError(
                search_too_small(budget, head_tokens + least_hit_tokens(candidates[0], model, query_terms))
            )
        return replace(fitted.result, rendered=fitted.text)


def repository_of(documents: DocumentService) -> Repository:
    """The documents' state in ``documents``' process, for what shares it (the semantic index); internal."""
    return documents._repo


async def _counts_of(repo: Repository, query_terms: list[str], also: Sequence[str] = ()) -> tuple[int, dict[str, int]]:
    """The current chunks, and how many rows hold each of the query's terms and of the words
    ``also`` names, once the index holds every acknowledged append (the search waits for that
    too): for the words a search leaves out of its last level (:func:`~ctxtrio.store.rows.fts_levels`),
    the forms it searches for too (:func:`~ctxtrio.text.neighbours.expand`) and how rare each
    term is (:func:`~ctxtrio.text.passages.rarity_weights`)."""
    await repo.store.index_settled()
    rows = sum(entry.info.chunks for entry in repo.current_journals().values())
    return rows, await repo.store.doc_counts("chunks", [*query_terms, *also])


def _file_title(file_path: str, source: str) -> str:
    """The title a file gets when none is given: its name, one harmless line (a file's name may hold ESC or a newline)."""
    return one_line(PurePath(file_path).name or source.rsplit("/", 1)[-1])


def _unchanged(earlier: DocumentInfo, digest: str, title: str) -> bool:
    """Ingesting again what ``earlier`` was read from would change nothing: same text, same title."""
    return earlier.content_hash == digest and earlier.title == title
