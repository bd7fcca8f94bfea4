"""Sessions: durable working memory. :class:`SessionService` is the library face of context_*.

Each session is one journal (``sessions/<id>.jsonl``, see :mod:`.state.columns` for the records)
replayed lazily into memory on first touch, so startup reads nothing. Before answering,
every read looks at the journal's size and applies what other processes appended (one
worker-thread call that also searches and packs, see :mod:`.sessions.store`). After its own
append a call applies its records directly when nothing else was written in between.

Recall searches an in-memory BM25 index per session (:mod:`.state.bm25`), not the store's
FTS5 table, which cost ~5 µs per matching row; the store indexes only document chunks,
so a session append costs one group-committed write and nothing else.

Cancellation: a call cancelled while its append is queued may still see the append
become durable (the journal, not the caller, is the truth); the in-memory state picks
it up on the next call. How compaction keeps recalls and appends going while it
summarizes, and never folds entries twice, is said in :mod:`.compaction.compact`.

The rooms: :mod:`.state` (one session's columns, views, BM25, snapshot),
:mod:`.sessions` (the one store object and what it keeps in step), :mod:`.compaction`
and :mod:`.admin` (listing, lifecycle, archive, prune). Each room imports only those
before it in that list; this module joins them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

import trio

from .._errors import InputError
from .._limits import RECALL_LIMIT, called, check_budget, check_range
from .._locks import Held
from ..llm.summarizer import Summarizer
from ..store.ids import validate_id
from ..store.records import JSON, NewRecord
from ..text.query import query_terms
from ..text.terms import terms
from .admin.archive import ArchiveMethods
from .admin.lifecycle import LifecycleMethods, refuse_deleted
from .admin.listing import ListingMethods
from .admin.prune import PruneMethods
from .arguments import check_role, check_tags, check_text, check_title
from .compaction.compact import CompactionMethods
from .expansion import load_tables, term_weights
from .model import (
    Appended,
    EntryVectorCheck,
    OpenResult,
    RecallResult,
    Role,
    SessionStatus,
    UpdateResult,
)
from .packing import pack_recall
from .ranking import MEANING_DEPTH, folded_match, fuse_meaning, rank, recent_candidates
from .render import render_recalled
from .semantic import EntryHits, check_vectors
from .sessions.registry import MAX_ENTRIES, MAX_SESSIONS
from .sessions.store import SessionStore, same_state
from .sessions.summary import fresh_summary
from .state.patches import entry_named, folding_after, folds_now, merged_into, patch_for
from .status import session_status, summary_status

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._live import Live
    from ..store.handle import StoreHandle
    from .semantic import EntryVectors
    from .sessions.repository import LoadedSession
    from .state.columns import SessionState

__all__ = ["SessionService", "held_sessions"]

T = TypeVar("T")

#: Most query terms searched (a pasted paragraph as a query stays fast).
MAX_QUERY_TERMS = 64
#: The closing line's word on a query that has no searchable words: its answer is the latest entries, which a
#: model asking "the of and" or "*" took for matches (doc_search refuses such a query; recall still answers).
UNSEARCHABLE_QUERY = (
    "the query has no searchable words (only punctuation or common stopwords): "
    "these are the latest entries, not matches; use distinctive words"
)


class SessionService(CompactionMethods, ListingMethods, LifecycleMethods, ArchiveMethods, PruneMethods):
    """Appends, recalls, compacts and reports on sessions; the library face of context_*.

    The only way in to sessions. The operations of the tools are here but for compact
    (:mod:`.compaction.compact`); listing, deleting and restoring, export and import,
    and prune are its methods too, each written where its concept lives
    (:mod:`.admin.listing`, :mod:`.admin.lifecycle`, :mod:`.admin.archive`,
    :mod:`.admin.prune`). All of them work through one :class:`~.sessions.store.SessionStore`.

    ``summarizer`` writes compaction summaries; without one, summaries are extractive.
    At most ``max_sessions`` idle sessions, holding ``max_entries`` entries in all, stay
    in memory (see :mod:`.sessions.registry`).
    """

    def __init__(
        self,
        store: StoreHandle,
        live: Live,
        summarizer: Summarizer | None = None,
        *,
        max_sessions: int = MAX_SESSIONS,
        max_entries: int = MAX_ENTRIES,
        query_expansion: bool = True,
    ) -> None:
        self._live = live
        #: Recall expands a query's plain words as doc_search does (``--query-expansion``, :mod:`.expansion`).
        self.query_expansion = query_expansion
        self._summarizer = summarizer if summarizer is not None else Summarizer(None, live.tokens)
        self._sessions = SessionStore(store, live, max_sessions=max_sessions, max_entries=max_entries)
        self._registry = self._sessions.registry
        #: Semantic recall of entries (``--embed-model``), set by ``_wiring.py`` once its task runs.
        self.semantic: EntryVectors | None = None

    async def check_vectors(self, model: str, dim: int | None, *, repair: bool = False) -> EntryVectorCheck:
        """The session entries' vectors of ``model`` (``--embed-model``) beside the journals (``ctxtrio doctor``).

        ``dim`` is the endpoint's dimension (None when it cannot be asked: the one stored).
        Journals are read as stored, nothing is loaded into memory; ``repair`` drops the
        vectors the embedder would drop (of sessions gone, of entries no journal holds with
        that text, of another model or dimension), and a server with ``--embed-model``
        embeds what is missing. StoreError if the vectors file cannot be read (deleting it
        re-embeds every entry).
        """
        return await check_vectors(self._sessions.handle, model, dim, repair=repair)

    # -- the seven operations ---------------------------------------------------------

    async def open(self, session_id: str | None = None, title: str | None = None) -> OpenResult:
        """Create a session (id generated when absent) or resume one; a new title renames it."""
        title = check_title(title)
        if session_id is None:
            session_id = await self._sessions.unused_id()
        with self._sessions.use(session_id) as session:
            async with session.lock:
                state = await self._sessions.sync(session, same_state, must_exist=False)
                refuse_deleted(state)
                created = not state.exists
                renamed_from = None
                if created or (title is not None and title != state.title):
                    renamed_from = None if created else state.title
                    record = NewRecord("session", {"title": title or session.session_id}, id=session.session_id)
                    state = await self._sessions.append(session, [record])
                return OpenResult(self._status(state), created, renamed_from)

    async def append(
        self,
        session_id: str,
        text: str,
        *,
        role: Role = "note",
        tags: Sequence[str] | None = None,
        pinned: bool = False,
    ) -> Appended:
        """Store an entry durably; the session is created if missing.

        Text equal to a live entry's (after stripping) stores nothing and returns that
        entry (``duplicate``); with ``pinned`` it pins the existing entry. An append does
        not look for other processes' lines first (that would cost a worker-thread hop
        per append): it checks duplicates against what this process has seen, then
        applies whatever the journal gained in between along with its own record.

        Cancelled once its record is queued to the store, the entry may still be stored
        (the journal, not the caller, is the truth): a later call sees it.
        """
        text = check_text(text)
        checked_role = check_role(role)  # a caller that ignores the type still gets a clear error
        checked_tags = check_tags(tags)
        with self._sessions.use(session_id) as session:
            return await self._append_entry(session, text, checked_role, checked_tags, pinned)

    async def _append_entry(
        self, session: LoadedSession, text: str, checked_role: Role, checked_tags: tuple[str, ...], pinned: bool
    ) -> Appended:
        async with session.lock:
            state = session.state
            if state is None or not state.exists:
                state = await self._sessions.sync(session, same_state, must_exist=False)
            refuse_deleted(state)
            existing = state.find_live_text(text)
            if existing is not None:
                if pinned and not existing.pinned:
                    state = await self._sessions.append(session, [NewRecord("patch", {"pinned": True}, id=existing.id)])
                return Appended(existing.snapshot(), True, self._status(state))
            records: list[NewRecord] = []
            if not state.exists:
                records.append(NewRecord("session", {"title": session.session_id}, id=session.session_id))
        body: dict[str, JSON] = {"text": text, "role": checked_role, "tags": list(checked_tags), "pinned": pinned}
        records.append(NewRecord("entry", body, id_prefix="e"))
        known = {text: terms(text)}  # computed before the write, while nothing else runs
        result = await self._sessions.write(session, records)
        if self.semantic is not None:
            self.semantic.wake()  # embedded afterwards: the acknowledgement never waits for it
        async with session.lock:
            state = await self._sessions.absorb(session, result, known)
            item = state.items[result.records[-1].id]
            return Appended(item.snapshot(), False, self._status(state))

    async def recall(
        self,
        session_id: str,
        query: str | None = None,
        *,
        budget_tokens: int | None = None,
        limit: int | None = None,
        tags: Sequence[str] | None = None,
    ) -> RecallResult:
        """Pins, then the entries that best match ``query`` (BM25 + recency), within the budget.

        With semantic recall on, BM25's ranking is fused with the entries nearest the
        query in meaning, as doc_search fuses chunks (:func:`~.ranking.fuse_meaning`);
        those found only by meaning are named as such.
        A query with no usable terms (or none) returns the most recent entries; the closing line
        of a query with none says so (:data:`UNSEARCHABLE_QUERY`), so they are not taken for matches.
        ``tags`` keeps matches carrying any of them; pins are always included.
        """
        budget = check_budget(budget_tokens, self._live.budget_tokens)
        check_range("limit", limit, RECALL_LIMIT)
        wanted = frozenset(check_tags(tags))
        terms = query_terms(query)[:MAX_QUERY_TERMS] if query else []
        model = self._live.tokens.current
        expanding = bool(terms) and query is not None and self.query_expansion
        if expanding:
            await load_tables()
        near = EntryHits([])
        if terms and query and self.semantic is not None:
            validate_id(session_id, "session_id")
            near = await self.semantic.nearest(session_id, query, MEANING_DEPTH)

        # Query expansion's weights, worked out once a recall: every repack of the fit loop ranks
        # again (the ranking is an iterator pack_recall consumes), over the same state, under the lock.
        expanded: list[dict[str, float]] = []

        def work(state: SessionState, room: int) -> RecallResult:
            if terms:
                if expanding and query is not None and not expanded:
                    expanded.append(term_weights(state.index, query, terms))
                weights = expanded[0] if expanded else None
                if near.keys:
                    ranked, matched, meaning = fuse_meaning(state, terms, wanted, near.keys, weights)
                else:
                    (ranked, matched), meaning = rank(state, terms, wanted, weights), frozenset[str]()
                folded = folded_match(state, terms) if matched == 0 and not wanted else None
                return pack_recall(
                    state,
                    ranked,
                    matched=matched,
                    budget_tokens=room,
                    limit=limit,
                    tags=wanted,
                    mode="query",
                    model=model,
                    query_terms=terms,
                    by_meaning=meaning,
                    skipped=near.skipped,
                    folded=folded,
                )
            if wanted:
                matched = sum(1 for _ in recent_candidates(state, wanted))
            else:
                matched = state.live_count - len(state.pins)
            return pack_recall(
                state,
                recent_candidates(state, wanted),
                matched=matched,
                budget_tokens=room,
                limit=limit,
                tags=wanted,
                mode="recent",
                model=model,
                notes=(UNSEARCHABLE_QUERY,) if query and query.strip() else (),
            )

        with self._sessions.use(session_id) as session:
            async with session.lock:
                state, first = await self._sessions.sync(session, lambda state: (state, work(state, budget)))
                # The final check: the text counted in the model's own tokens when the
                # server can count (one round trip), repacked smaller only if it is over;
                # the text counted, its "estimated" mark inside, is the answer.
                fitted = await self._live.counter.fit_marked(
                    budget,
                    lambda room, estimated: replace(
                        first if room == budget else work(state, room), estimated=estimated
                    ),
                    render_recalled,
                )
                return replace(fitted.result, budget_tokens=budget, rendered=fitted.text)

    async def status(self, session_id: str) -> SessionStatus:
        """Live tokens against the budget, pins, counts, and whether to compact.

        A session not in memory is answered from its summary file when that is fresh
        (nothing is loaded); an unknown id is answered without keeping anything.
        """
        if session_id not in self._registry:
            validate_id(session_id, "session_id")
            path = self._sessions.handle.data.session_journal(session_id)
            summary = await trio.to_thread.run_sync(fresh_summary, path, session_id, self._live.tokens.current)
            if summary is not None and summary.deleted_at is None:
                return summary_status(summary, self._live, self._live.tokens.current.source)
        with self._sessions.use(session_id) as session:
            # Free nearly always: a status of an unchanged session then answers with no loop
            # turn at all (under a storm of ingests each turn waits for every other task's step).
            async with Held(session.lock):
                return await self._sessions.sync(session, self._status, cheap=True)

    async def update(
        self,
        session_id: str,
        entry_id: str,
        *,
        pinned: bool | None = None,
        delete: bool | None = None,
        restore: bool | None = None,
    ) -> UpdateResult:
        """Pin or unpin, delete, or restore one entry (exactly one of the three).

        Restoring a summary undoes its compaction. ``delete=False`` means restore.
        Asking for the state an entry already has changes nothing and stores nothing.

        Cancelled before its one patch record is queued to the store, the entry is as it
        was. Once queued the patch may still be stored (the journal, not the caller, is the
        truth): a later call sees the entry pinned, deleted or restored.
        """
        if sum(value is not None for value in (pinned, delete, restore)) != 1:
            raise InputError("give exactly one of pinned, delete or restore")
        if restore is False:
            raise InputError("restore takes true; to delete an entry use delete=true")
        validate_id(entry_id, called("entry_id"))
        with self._sessions.use(session_id) as session:
            return await self._update(session, entry_id, pinned=pinned, delete=delete)

    async def _update(
        self, session: LoadedSession, entry_id: str, *, pinned: bool | None, delete: bool | None
    ) -> UpdateResult:
        async with session.lock:
            state = await self._sessions.sync(session, same_state)
            item = entry_named(state, entry_id)
            body, restored = patch_for(item, state, pinned=pinned, delete=delete)
            folded_into = item.superseded_by if restored == (item.id,) else None
            if body:
                state = await self._sessions.append(session, [NewRecord("patch", body, id=item.id)])
                item = state.items[item.id]
            summary, still = folding_after(item, state, folded_into)
            now, merger = (folds_now(item, state), merged_into(item, state)) if not body else ((), None)
            status = self._status(state)
            return UpdateResult(item.snapshot(), bool(body), restored, status, summary, still, now, merger)

    # -- plumbing -------------------------------------------------------------------

    def _status(self, state: SessionState) -> SessionStatus:
        return session_status(state, self._live)


def held_sessions(service: SessionService) -> SessionStore:
    """The sessions ``service`` holds in this process, for the wiring's background entry embedder.

    A function, not a property: ``SessionStore`` is internal, and a library user under
    ``mypy --strict`` meets on :class:`SessionService` only types ``ctxtrio`` exports.
    """
    return service._sessions
