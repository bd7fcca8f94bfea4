"""Where documents live: the replayed catalog, generation files, and loaded chunks.

Layout (see :mod:`ctxtrio.store.layout`): ``docs/catalog.jsonl`` (:mod:`.catalog`) and
one file per ingest generation, ``docs/<doc>/<gen>.jsonl`` (:mod:`.chunks`).

Several processes may share the data dir. Before every read the service calls
:meth:`Repository.refresh`, which replays what the catalog gained since last time
(under a ``trio.Lock``, so concurrent calls replay once). Superseded and forgotten
generations found while replaying are removed through the store writer (file and
index rows; removing twice is harmless) once what replaced them is durable: another
process's commit may be read while its fsync round still runs, so the catalog and the
replacing file are fsynced here first (:meth:`Repository._replaced_durably`). The first refresh replays the
whole catalog and sweeps the folders instead (:mod:`.folders`, acted on by :mod:`.startup`): generations a readable catalog record
proves obsolete (committed, then superseded or forgotten) are removed. Data is never
deleted because metadata is unreadable: a generation no readable record commits (an
ingest that crashed or was cancelled, or one whose commit line is damaged or was cut
off) is moved to ``lost-and-found/`` and reported once it is older than
:data:`~.folders.ORPHAN_AGE_S` (another process may still be writing a young one). The index is
caught up for current generations (a crash between a journal fsync and its index
update); for another process's commits a later replay finds, by the next search of them
(:meth:`~ctxtrio.store.handle.StoreHandle.catch_up_later`).

Loaded generations are kept in a bounded LRU (by characters); a generation removed
by another process while it was not loaded is noticed on load and resolved again.
"""

from __future__ import annotations

import logging
import os
import time
from functools import partial
from typing import TYPE_CHECKING

import trio

from .._errors import NotFoundError, StoreError
from .._locks import Held
from ..store.ids import other_case
from .catalog import (
    CatalogState,
    DocEntry,
    commit_key,
    commit_record,
    cursor_record,
    drop_stale_cursors,
    forget_record,
    generation_end,
    unlanded,
)
from .current import CurrentJournals
from .file_owners import FileOwners
from .folders import landed_or_own, probe_writable, remove_empty_dirs, sweep_folders
from .loaded import DEFAULT_CACHE_CHARS, Key, LoadedGenerations
from .startup import drop_rows_of_files_gone, settle_sweep

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping
    from pathlib import Path

    from ..store.handle import StoreHandle
    from ..store.layout import DataDir
    from ..store.records import NewRecord, StoredRecord
    from ..store.results import AppendResult
    from ..store.rows import IndexRow
    from .model import DocumentInfo

__all__ = ["COMMIT_DEADLINE_S", "CommitTimeoutError", "Repository"]

log = logging.getLogger("ctxtrio.docs")

#: How long a commit waits for the store writer's acknowledgement (a batch of other
#: large appends and its fsync go first; a healthy disk takes well under a second).
COMMIT_DEADLINE_S = 120.0
CATALOG_NAME = "catalog.jsonl"


class CommitTimeoutError(StoreError):
    """The store writer did not acknowledge a document's commit in time; it may still land."""


class Repository(LoadedGenerations):
    """The documents' state in this process, kept in step with the shared data dir; the
    generations it loaded (:class:`~.loaded.LoadedGenerations`)."""

    def __init__(self, store: StoreHandle, *, cache_chars: int = DEFAULT_CACHE_CHARS) -> None:
        super().__init__(cache_chars)
        self.store = store
        self.data: DataDir = store.data
        self.catalog_path = self.data.docs / CATALOG_NAME
        self.state = CatalogState()
        #: (dev, inode) of the catalog the state was replayed from: another one means it was rewritten.
        self._catalog_id: tuple[int, int] | None = None
        self._lock = trio.Lock()
        self._opened = False
        self._docs_prefix = self.data.journal_name(self.data.docs) + "/"
        self._current = CurrentJournals(self.journal)
        self._file_owners = FileOwners(self.journal)
        #: Generation files set aside in lost-and-found by this process's startup sweep.
        self.lost: list[Path] = []
        #: Document → generation of its last commit, skipped by a replay as not landed
        #: (:meth:`unlanded`), until a later commit or forget of the document.
        self.cut_short: dict[str, str] = {}
        #: (doc, gen) of this process's commits from their append until applied. Concurrent ingests' commits land
        #: between each other's, so another ingest's refresh applies most; the writer wrote their chunks first and
        #: indexes them from the rows they came with, so that replay neither reads their files nor catches them up.
        self._own: set[tuple[str, str]] = set()

    # -- paths --------------------------------------------------------------------

    def gen_path(self, doc_id: str, gen: str) -> Path:
        return self.data.docs / doc_id / f"{gen}.jsonl"

    def journal(self, entry: DocEntry) -> str:
        """The index's name for the entry's generation file (what ``data.journal_name`` gives)."""
        return f"{self._docs_prefix}{entry.doc_id}/{entry.gen}.jsonl"

    def current_journals(self) -> Mapping[str, DocEntry]:
        """Journal name → entry, for every current document: a snapshot, never changed once returned (made from
        the last one and the documents changed since, :class:`~.current.CurrentJournals`)."""
        return self._current.view(self.state)

    def current_chunks(self) -> int:
        """How many chunks the current documents hold in all (kept as :meth:`current_journals` is)."""
        return self._current.chunks(self.state)

    async def files_named(self, names: Collection[str], by_journal: Mapping[str, DocEntry]) -> dict[str, DocEntry]:
        """The documents of ``by_journal`` whose file names hold one of ``names`` (:func:`~.defined.file_names`),
        looked up by name (:class:`~.file_owners.FileOwners`, in step with the catalog as it stands). Those of
        ``by_journal`` changed since it was taken (a search that began before an ingest, a replace or a forget)
        are not among them: a search drops their hits as replaced or forgotten meanwhile."""
        state = self.state
        await self._file_owners.build(state)
        found = self._file_owners.journals(state, names)
        return {journal: by_journal[journal] for journal in sorted(found) if journal in by_journal}

    # -- the catalog --------------------------------------------------------------

    async def refresh(self) -> None:
        """Replay what the catalog gained; remove generations that became obsolete."""
        async with Held(self._lock):  # free nearly always: no extra loop turn
            if not self._opened:
                await self._open()
                self._opened = True
                return
            obsolete, committed = await self._replay()
            # Another process's commits: its index update may never have come (see catch_up_later).
            await self.store.catch_up_later(committed)
            if obsolete:
                obsolete = await trio.to_thread.run_sync(self._replaced_durably, obsolete)
        await self._remove(obsolete)

    def _replaced_durably(self, obsolete: list[Key]) -> list[Key]:
        """Of the generations another process's records made obsolete, those whose removal can no
        longer outlive what replaced them, once that is made durable here (blocking).

        That process writes a commit with its last chunks and fsyncs them in one round, so we may
        read the commit while its round runs. Were the old file unlinked now and the machine lost
        power before that round ended, the unlink could survive and the new version not (the
        filesystem orders neither). So the catalog and each replacing generation file, with its
        folder, are fsynced first; a generation whose replacement cannot be (gone, unreadable) is
        left for its writer or the startup sweep. Rare: only when another process re-ingests or
        forgets a document this one knew.
        """
        try:
            _fsync(self.catalog_path)
        except OSError as exc:
            log.warning(
                "cannot fsync %s; obsolete generations are left for the startup sweep: %s", self.catalog_path, exc
            )
            return []
        kept: list[Key] = []
        for doc_id, gen in obsolete:
            current = self.state.docs.get(doc_id)
            try:
                if current is not None:
                    path = self.gen_path(doc_id, current.gen)
                    _fsync(path)
                    _fsync(path.parent)
            except OSError as exc:
                log.info("generation %s/%s stays until the startup sweep: its replacement: %s", doc_id, gen, exc)
                continue
            kept.append((doc_id, gen))
        return kept

    def entry(self, doc_id: str) -> DocEntry:
        """The current entry of ``doc_id`` (as of the last refresh), or NotFoundError."""
        entry = self.state.docs.get(doc_id)
        if entry is None and doc_id in self.cut_short:
            raise NotFoundError(
                f"no document {doc_id!r}: its last version (generation {self.cut_short[doc_id]}) did not land "
                "whole (a crash while it was written, or its file was damaged since); the file is kept and "
                "set aside in lost-and-found/ once an hour old: ingest the document again",
                hint="list_documents",
            )
        if entry is None:
            raise NotFoundError(f"no document {doc_id!r}{other_case(doc_id, self.state.docs)}", hint="list_documents")
        return entry

    async def append_catalog(self, records: list[NewRecord]) -> None:
        """Append to the catalog (durable on return), then absorb it."""
        await self.absorb(await self.store.append(self.catalog_path, records))

    async def absorb(self, result: AppendResult) -> None:
        """Apply our own catalog append, then remove the generations it made obsolete.

        Directly when the state ends where the append began; not at all when a refresh
        already read it; otherwise through a refresh, which also replays whatever other
        processes appended in between (``AppendResult.to_absorb``, as sessions do).
        """
        async with Held(self._lock):  # free nearly always: no extra loop turn
            same_file = result.file_id is None or result.file_id == self._catalog_id
            own = result.to_absorb(self.state.offset) if self._opened and same_file else None
            obsolete = self._apply(own, result.end) if own is not None else None
        if obsolete is None:
            await self.refresh()
        else:
            await self._remove(obsolete)

    async def commit(
        self, info: DocumentInfo, gen: str, last: tuple[list[NewRecord], list[list[IndexRow]]] | None = None
    ) -> tuple[AppendResult, int | None]:
        """Make ``gen`` the current generation of the document: the atomic switch.

        ``last``: the generation's last records and their index rows, appended first in
        the same store batch (:meth:`~ctxtrio.store.handle.StoreHandle.append_then`: the
        commit is written after them, naming where they end, and fsynced with them), so a
        document of one batch costs one round trip to the writer and one fsync round. An error of that append is raised as it is. Returns the
        commit's result and, with ``last``, where the generation file ends.

        Shielded: once queued, the commit may land even if the caller is cancelled, so
        the caller must not get the chance to delete the generation behind it. The
        caller absorbs the result (:meth:`absorb`). The shield has a deadline,
        :data:`COMMIT_DEADLINE_S`: a store writer that has not acknowledged the commit by
        then (a disk stalled in fsync) gives :class:`CommitTimeoutError`. The commit may
        still land after it, so the caller keeps the generation file; if it never lands,
        the startup sweep sets the file aside in lost-and-found. Nothing acknowledged is
        undone either way.
        """
        result: AppendResult | None = None
        end: int | None = None
        own, commit = (info.doc_id, gen), [commit_record(info, gen)]
        self._own.add(own)  # before the append: another ingest's refresh may read it before it is acknowledged
        try:
            with trio.CancelScope(shield=True) as scope:
                scope.deadline = trio.current_time() + COMMIT_DEADLINE_S
                if last is None:
                    result = await self.store.append(self.catalog_path, commit)
                else:
                    records, rows = last
                    path = self.gen_path(info.doc_id, gen)
                    chunks, result = await self.store.append_then(path, records, self.catalog_path, commit, rows=rows)
                    end = chunks.end
        except BaseException:
            self._own.discard(own)  # no commit may follow to be applied: a replay checks any as another process's
            raise
        if result is None:
            self._own.discard(own)  # a replay checks it as another process's if it lands after all
            raise CommitTimeoutError(
                f"the store did not confirm the commit of document {info.doc_id!r} within {COMMIT_DEADLINE_S:g} s "
                "(is the disk stalled?); it may still land: list the documents to see"
            )
        return result, end

    async def forget(self, doc_id: str) -> None:
        """Forget a document, only if its files can be removed: a failure leaves it intact.

        The ``forget`` record is the commit point, so the folder is proved writable
        first (a probe file created and removed in it); a read-only data dir refuses
        before anything changes.
        """
        await trio.to_thread.run_sync(probe_writable, self.data.docs / doc_id)
        await self.append_catalog([forget_record(doc_id)])

    async def set_cursor(self, entry: DocEntry, session: str, position: int, at: int = 0) -> None:
        await self.append_catalog([cursor_record(entry.doc_id, entry.gen, session, position, at)])
        if self.state.compaction_due():
            # Under the catalog's lock, whatever other processes appended meanwhile included;
            # every process (this one too) notices the new file and replays it (_replay).
            try:
                result = await self.store.rewrite(self.catalog_path, drop_stale_cursors)
            except StoreError as exc:
                # The cursor is durable: the window it moved past is the answer. Failing the call
                # (a full disk) would make the next window skip this one; the next cursor tries again.
                log.warning("catalog: stale cursor records not dropped yet: %s", exc)
                return
            log.info("catalog: %d stale cursor records dropped", result.records_before - result.records_after)
            await self.refresh()

    async def _replay(self) -> tuple[list[Key], list[Path]]:
        """Apply what the catalog gained: the generations made obsolete, and the files of those it committed
        that are current now (none after a rewritten catalog: the startup sweep's)."""
        size, catalog_id = _stat(self.catalog_path)
        if self._opened and catalog_id == self._catalog_id and size == self.state.offset:
            return [], []  # nothing appended since (one stat, not a worker-thread read per call)
        if self._catalog_id is not None and catalog_id != self._catalog_id:
            # Rewritten (stale cursors dropped): offsets of the old file mean nothing in the
            # new one. It says the same, so it is replayed whole into a fresh state; the
            # generations that replay finds superseded are the startup sweep's to remove.
            fresh = CatalogState(version=self.state.version + 1)
            result = await self.store.read(self.catalog_path, 0)
            skipped = await self.unlanded(result.records)
            for position, record in enumerate(result.records):
                if position not in skipped:
                    fresh.apply(record.data)
                    self._own.discard(commit_key(record.data))
            fresh.offset = result.end
            self.state, self._catalog_id = fresh, catalog_id
            return [], []
        self._catalog_id = catalog_id
        result = await self.store.read(self.catalog_path, self.state.offset)
        skipped = await self.unlanded(result.records)
        records = [record for n, record in enumerate(result.records) if n not in skipped]
        commits = [key for record in records if (key := commit_key(record.data)) not in self._own]
        obsolete = self._apply(records, result.end)
        current = [(doc, gen) for doc, gen in commits if (entry := self.state.docs.get(str(doc))) and entry.gen == gen]
        return obsolete, [self.gen_path(str(doc), str(gen)) for doc, gen in dict.fromkeys(current)]

    async def unlanded(self, records: list[StoredRecord]) -> set[int]:
        """Positions of the commits among ``records`` whose generation file does not reach the
        end they name (see :mod:`.catalog`): a replay skips them. Our own commits are not checked
        (``_own``): the writer wrote their chunks before them."""
        own = self._own
        if all(generation_end(record.data) is None or commit_key(record.data) in own for record in records):
            return set()
        check = partial(landed_or_own, own, self.data.docs)
        skipped = await trio.to_thread.run_sync(unlanded, [record.data for record in records], check)
        for position in sorted(skipped):
            doc, gen = records[position].data.get("doc"), records[position].data.get("gen")
            if isinstance(doc, str) and isinstance(gen, str):
                self.cut_short[doc] = gen
            log.warning(
                "catalog: the commit of %s/%s is skipped: its generation file does not reach the end it names "
                "(a crash while it was written, or the file was damaged since); the version before it stays",
                doc,
                gen,
            )
        return skipped

    def _apply(self, records: list[StoredRecord], end: int) -> list[Key]:
        """Apply catalog records read up to ``end`` (none: nothing moves); the generations made obsolete."""
        if not records and end <= self.state.offset:
            return []
        obsolete = [found for record in records if (found := self.state.apply(record.data)) is not None]
        if self._own:
            self._own.difference_update(commit_key(record.data) for record in records)
        if self.cut_short:
            for record in records:
                if record.data.get("kind") in ("commit", "forget"):
                    self.cut_short.pop(str(record.data.get("doc")), None)
        self.state.offset = end
        return obsolete

    async def _open(self) -> None:
        await self._replay()
        sweep = await trio.to_thread.run_sync(
            partial(sweep_folders, self.data, self.store, self.state, now=time.time())
        )
        if self.store.read_only:
            # Only looking (a reader of a data dir it cannot write, doctor without --repair): what the sweep
            # found to remove, set aside or heal waits for a start that can write, and every document is read
            # from its journals as it is. The index is searched as far as it goes; a search names the documents
            # it lacks. (Each of these writes, refused, failed the reader, `ctxtrio docs` too.)
            await self.store.catch_up_later([*sweep.catch_up, *sweep.unchecked])
            return
        await settle_sweep(self.store, self.data, sweep, self.lost)
        await trio.to_thread.run_sync(partial(remove_empty_dirs, self.data.docs, self.state, now=time.time()))
        await drop_rows_of_files_gone(self.store, self.data.root, self._docs_prefix, self.current_journals())

    async def _remove(self, obsolete: list[Key]) -> None:
        for doc_id, gen in obsolete:
            self._forget_loaded((doc_id, gen))
            try:
                await self.store.remove(self.gen_path(doc_id, gen))
            except StoreError as exc:  # the record stands; the next startup sweep removes the file
                log.warning("could not remove obsolete generation %s/%s (retried at startup): %s", doc_id, gen, exc)


def _fsync(path: Path) -> None:
    """fsync a file or folder (blocking; OSError as it is)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _stat(path: Path) -> tuple[int, tuple[int, int] | None]:
    """The size of ``path`` in bytes and its (dev, inode); (-1, None) if it cannot be read (the caller reads it)."""
    try:
        info = os.stat(path)
    except OSError:
        return -1, None
    return info.st_size, (info.st_dev, info.st_ino)
