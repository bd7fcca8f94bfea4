"""The document catalog: which generation of each document is current, and the cursors.

``docs/catalog.jsonl`` is an append-only journal shared by every process on the data
dir. Its records, replayed in file order (the last word wins):

* ``commit`` (doc, gen, title, source, chunks, chars, tokens, sha256, end): generation ``gen``
  is now the document. The atomic switch of a re-ingest: before it readers see the old
  version, after it the new one, never a mix; a crash before it leaves the old one. It is
  written after the last chunks of ``docs/<doc>/<gen>.jsonl`` and fsynced in the same round
  as them, so ``end`` says where the generation ends in its file: a commit whose file does
  not reach ``end`` (a crash kept the commit and not all of the chunks, or not the file's
  folder entry) has not landed, and a replay skips it (:func:`unlanded`): the previous
  commit stands. Commits without ``end`` (older stores wrote a commit only once its chunks
  were durable) always land.
* ``forget`` (doc): the document and all its cursors are gone.
* ``cursor`` (doc, gen, session, next, optional at): where ``doc_window`` continues for one session
  (``""`` is the default cursor): chunk ``next``, ``at`` characters into its text (written only
  when a window ended in a chunk cut to fit its budget; absent is 0, the chunk's start, as older
  catalogs say). A cursor of another generation reads as 0.

Every ``doc_window`` call appends a cursor record, so the catalog would grow with every
read (issue 27, finding 10). Once the cursor records outnumber the live cursors by
:data:`CURSOR_SLACK`, :func:`drop_stale_cursors` rewrites the catalog without the cursor
records a later one replaced or a later ``forget`` ended; commits and forgets stay (the
startup sweep proves a generation file obsolete by its commit record). The catalog then
holds at most one cursor record per live (document, session) pair, plus that slack.

:class:`CatalogState` is the replayed state, pure and synchronous; the service feeds it
the records it reads from the journal (its own and other processes' alike).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..store.ops import ENDS_AT
from ..store.records import NewRecord, Record
from ..text.harmless import one_line
from .model import DocumentInfo

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = [
    "CURSOR_SLACK",
    "CatalogChanges",
    "CatalogState",
    "DocEntry",
    "commit_key",
    "commit_record",
    "cursor_record",
    "drop_stale_cursors",
    "forget_record",
    "generation_end",
    "unlanded",
]

#: Cursor records beyond the live cursors that trigger a rewrite of the catalog.
CURSOR_SLACK = 2000


@dataclass(frozen=True, slots=True)
class DocEntry:
    """The current generation of a document and what the catalog says about it."""

    info: DocumentInfo
    gen: str

    @property
    def doc_id(self) -> str:
        return self.info.doc_id


@dataclass(frozen=True, slots=True)
class CatalogChanges:
    """What changed in the catalog since a version: what a watcher needs without every document at each look."""

    version: int
    #: The documents committed or forgotten since (sorted).
    changed: list[str]
    #: Those of ``changed`` that are current now.
    current: frozenset[str]
    #: Every current document when the changes since cannot be told (no version given, a version this state
    #: never had: a catalog replayed afresh); None when ``changed`` is all that changed.
    listing: frozenset[str] | None


@dataclass(slots=True)
class CatalogState:
    """Documents, cursors and every generation ever committed, as replayed so far.

    ``offset`` is how far into the catalog journal the state has been replayed.
    """

    docs: dict[str, DocEntry] = field(default_factory=dict)
    #: (doc, session) → (gen, next chunk, characters into it).
    cursors: dict[tuple[str, str], tuple[str, int, int]] = field(default_factory=dict)
    committed: set[tuple[str, str]] = field(default_factory=set)
    #: The committed generations that replaced a current version of their document, so an
    #: ingest answers what its commit did where the catalog orders it among concurrent ones.
    replacing: set[tuple[str, str]] = field(default_factory=set)
    offset: int = 0
    #: Bumped whenever ``docs`` changes, so derived views know when to rebuild.
    version: int = 0
    #: Cursor records replayed (live or replaced): compared with ``cursors`` to know when to compact.
    cursor_records: int = 0
    #: The document each bump of ``version`` by :meth:`apply` changed, the last one last
    #: (a state replayed afresh starts at a later version with an empty list).
    changed: list[str] = field(default_factory=list)
    #: Source (a file's resolved path, or "inline") → the current documents read from it.
    sources: dict[str, set[str]] = field(default_factory=dict)

    def apply(self, record: Record) -> tuple[str, str] | None:
        """Apply one record; return the (doc, gen) it made obsolete, if any."""
        kind = record.get("kind")
        doc = record.get("doc")
        if not isinstance(doc, str):
            return None
        if kind == "commit":
            entry = _entry(doc, record)
            if entry is None:
                return None
            previous = self.docs.get(doc)
            self.docs[doc] = entry
            if previous is not None:
                self._unsourced(previous)
            self.sources.setdefault(entry.info.source, set()).add(doc)
            self.version += 1
            self.changed.append(doc)
            self.committed.add((doc, entry.gen))
            if previous is not None:
                self.replacing.add((doc, entry.gen))
            if previous is not None and previous.gen != entry.gen:
                return doc, previous.gen
            return None
        if kind == "forget":
            previous = self.docs.pop(doc, None)
            if previous is not None:
                self._unsourced(previous)
            self.version += 1
            self.changed.append(doc)
            for key in [key for key in self.cursors if key[0] == doc]:
                del self.cursors[key]
            return (doc, previous.gen) if previous is not None else None
        if kind == "cursor" and (cursor := _cursor(record)) is not None:
            gen, session, position, at = cursor
            self.cursors[(doc, session)] = (gen, position, at)
            self.cursor_records += 1
        return None

    def from_source(self, source: str) -> list[DocEntry]:
        """The current documents read from ``source`` (without looking at the others)."""
        return [self.docs[doc] for doc in self.sources.get(source, ())]

    def _unsourced(self, entry: DocEntry) -> None:
        found = self.sources.get(entry.info.source)
        if found is not None:
            found.discard(entry.doc_id)
            if not found:
                del self.sources[entry.info.source]

    def compaction_due(self) -> bool:
        """Whether replaced cursor records in the catalog exceed :data:`CURSOR_SLACK`."""
        return self.cursor_records - len(self.cursors) > CURSOR_SLACK

    def changed_since(self, version: int) -> set[str]:
        """The documents committed or forgotten since ``version``; every document this state
        has seen change when ``version`` is not one of its own (before its start, or ahead)."""
        if not self._knows(version):
            return set(self.changed)
        return set(self.changed[version - (self.version - len(self.changed)) :])

    def changes(self, since: int | None) -> CatalogChanges:
        """The documents changed since version ``since`` (None: a first look), and every current document only
        when that cannot be told: the change watcher listed all 20,000 at each look where the catalog moved,
        3-5 s of the event loop's time a minute under 4 ingesting clients (``stress/busy_search.py``)."""
        changed = sorted(self.changed_since(-1 if since is None else since))
        current = frozenset(doc for doc in changed if doc in self.docs)
        known = since is not None and self._knows(since)
        return CatalogChanges(self.version, changed, current, None if known else frozenset(self.docs))

    def _knows(self, version: int) -> bool:
        """Whether ``version`` is one of this state's own (its changed list reaches back to it)."""
        return self.version - len(self.changed) <= version <= self.version

    def position(self, doc: str, session: str) -> tuple[int, int]:
        """Where reading continues for (doc, session): (chunk, characters into its text); (0, 0)
        unless a cursor of the current generation exists."""
        entry = self.docs.get(doc)
        found = self.cursors.get((doc, session))
        if entry is None or found is None or found[0] != entry.gen:
            return 0, 0
        return found[1], found[2]


def _cursor(record: Record) -> tuple[str, str, int, int] | None:
    """A cursor record's (gen, session, next, at), or None when it is not one a window wrote (hand-edited
    or damaged): replay ignores it. A negative ``next`` is refused too: as an index it reads the
    document from its end (``next: -1`` showed its last chunk); ``at`` no window wrote reads as 0."""
    gen, session, position, at = record.get("gen"), record.get("session"), record.get("next"), record.get("at", 0)
    if not (isinstance(gen, str) and isinstance(session, str) and isinstance(position, int) and position >= 0):
        return None
    return gen, session, position, at if isinstance(at, int) and at > 0 else 0


def _entry(doc: str, record: Record) -> DocEntry | None:
    gen, title, source = record.get("gen"), record.get("title"), record.get("source")
    chunks, chars, tokens, ts = record.get("chunks"), record.get("chars"), record.get("tokens"), record.get("ts")
    if not (isinstance(gen, str) and isinstance(title, str) and isinstance(source, str)):
        return None
    if not (isinstance(chunks, int) and isinstance(chars, int) and isinstance(tokens, int)):
        return None
    ingested_at = float(ts) if isinstance(ts, (int, float)) else 0.0
    digest = record.get("sha256")
    content_hash = digest if isinstance(digest, str) else ""
    # A title stored before titles were made harmless (or by hand) is shown as one harmless line too.
    return DocEntry(DocumentInfo(doc, one_line(title), source, chunks, chars, tokens, ingested_at, content_hash), gen)


def generation_end(record: Record) -> int | None:
    """Where a commit record says its generation ends in its file (None: a commit of an older store)."""
    end = record.get(ENDS_AT)
    return end if record.get("kind") == "commit" and isinstance(end, int) else None


def unlanded(records: Sequence[Record], landed: Callable[[Record], bool]) -> set[int]:
    """Positions of the commit records a replay of ``records`` skips, as not landed.

    ``landed`` checks a commit that names its end (a file read: :func:`generation_end`). Only
    the last commit of each document is checked, and while it has not landed, the one
    before it, back to a ``forget``: a commit that others follow no longer decides which
    generation is current, and its file is usually gone (removed once replaced).
    """
    skipped: set[int] = set()
    settled: set[object] = set()
    for position in range(len(records) - 1, -1, -1):
        record = records[position]
        doc, kind = record.get("doc"), record.get("kind")
        if doc in settled or kind not in ("commit", "forget"):
            continue
        if kind == "forget" or generation_end(record) is None or landed(record):
            settled.add(doc)
        else:
            skipped.add(position)
    return skipped


def drop_stale_cursors(records: list[Record]) -> list[Record] | None:
    """The catalog without cursor records replaced by a later one or ended by a later ``forget``.

    None when there is nothing to drop (the journal is then left as it is). Everything
    else is kept as it was, in order, so replaying the result gives the same state.
    """
    # Only the cursor records replay takes: a malformed one after a good one (hand-edited) was the "last",
    # so the good one went and the read position fell back to the start. Malformed ones are kept as they are.
    cursors = {
        number
        for number, record in enumerate(records)
        if record.get("kind") == "cursor" and _cursor(record) is not None
    }
    last: dict[tuple[object, object], int] = {}
    forgotten: dict[object, int] = {}
    for number, record in enumerate(records):
        if number in cursors:
            last[(record.get("doc"), record.get("session"))] = number
        elif record.get("kind") == "forget":
            forgotten[record.get("doc")] = number
    kept = [
        record
        for number, record in enumerate(records)
        if number not in cursors
        or (
            last.get((record.get("doc"), record.get("session"))) == number
            and forgotten.get(record.get("doc"), -1) < number
        )
    ]
    return kept if len(kept) < len(records) else None


def commit_record(info: DocumentInfo, gen: str) -> NewRecord:
    body: Record = {
        "doc": info.doc_id,
        "gen": gen,
        "title": info.title,
        "source": info.source,
        "chunks": info.chunks,
        "chars": info.chars,
        "tokens": info.tokens,
        "sha256": info.content_hash,
    }
    return NewRecord("commit", body, id_prefix="c")


def forget_record(doc_id: str) -> NewRecord:
    return NewRecord("forget", {"doc": doc_id}, id_prefix="f")


def cursor_record(doc_id: str, gen: str, session: str, position: int, at: int = 0) -> NewRecord:
    """A cursor at chunk ``position``, ``at`` characters into its text (said only when not 0, so a
    cursor at a chunk's start is the record older versions wrote and read)."""
    body: Record = {"doc": doc_id, "gen": gen, "session": session, "next": position}
    if at:
        body["at"] = at
    return NewRecord("cursor", body, id_prefix="k")


def commit_key(record: Record) -> tuple[str, str]:
    """(doc, gen) of a catalog record (a commit's; a forget names no generation)."""
    return str(record.get("doc")), str(record.get("gen"))
