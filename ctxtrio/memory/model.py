"""What the session service returns: frozen value objects, plus the input limits.

Every method of :class:`~ctxtrio.memory.service.SessionService` returns one of these;
the MCP tools only format them. Token counts are estimates of an entry's whole recall
line (``[e12 decision pinned #auth] text``), so they add up to what recall spends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from .._limits import MAX_TAGS

__all__ = [
    "MAX_ENTRY_CHARS",
    "MAX_TAGS",
    "ROLES",
    "Advice",
    "Appended",
    "CompactResult",
    "Entry",
    "EntryStatus",
    "EntryVectorCheck",
    "OpenResult",
    "RecallResult",
    "Role",
    "SessionInfo",
    "SessionPage",
    "SessionStatus",
    "UpdateResult",
]

Role = Literal["note", "user", "assistant", "system", "decision", "summary"]
ROLES: Final[tuple[Role, ...]] = ("note", "user", "assistant", "system", "decision", "summary")
EntryStatus = Literal["live", "superseded", "deleted"]
#: ``ok`` below 80% of the budget, ``compact soon`` from 80%, ``compact now`` above 100%.
Advice = Literal["ok", "compact soon", "compact now"]

#: Larger material belongs in a document (doc_ingest), which is paged, not recalled whole.
MAX_ENTRY_CHARS: Final = 16_000


@dataclass(frozen=True, slots=True)
class Entry:
    """One session entry as it stands now.

    ``folds`` lists the entries a summary's compaction folded (empty for other entries; it never
    changes); ``superseded_by`` names the summary that keeps this entry out of recall now: set
    only while ``status`` is ``"superseded"`` (an entry folded and deleted since names none).
    """

    id: str
    seq: int
    role: Role
    text: str
    tags: tuple[str, ...]
    pinned: bool
    status: EntryStatus
    ts: float
    tokens: int
    superseded_by: str | None = None
    folds: tuple[str, ...] = ()

    def still_folded_by(self, summary_id: str) -> bool:
        """Whether summary ``summary_id`` still keeps this entry out of recall, so that undoing its
        compaction brings it back: superseded by it, not restored or deleted since, nor folded again
        into another summary."""
        return self.status == "superseded" and self.superseded_by == summary_id


@dataclass(frozen=True, slots=True)
class SessionStatus:
    """Where a session stands against the token budget."""

    session_id: str
    title: str
    live_entries: int
    live_tokens: int
    budget_tokens: int
    budget_source: str
    pinned: int
    pinned_tokens: int
    superseded: int
    deleted: int
    summaries: int
    token_source: str
    last_activity: float
    advice: Advice
    #: Live entries context_compact may fold (unpinned, not summaries): with fewer than two, compacting cannot
    #: help (it merges earlier summaries only into a fold of entries).
    foldable: int
    warnings: tuple[str, ...] = ()
    #: Of ``deleted``, the summaries undone or merged into a later compaction's (nothing was deleted by hand).
    retired: int = 0

    @property
    def percent(self) -> int:
        """Live tokens as a whole percentage of the budget."""
        return round(100 * self.live_tokens / self.budget_tokens) if self.budget_tokens else 0


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One line of the session list; ``deleted_at`` is set while the session is deleted."""

    session_id: str
    title: str
    live_entries: int
    last_activity: float
    deleted_at: float | None = None


@dataclass(frozen=True, slots=True)
class OpenResult:
    """A session opened: created now, or resumed with what it already holds; ``renamed_from``: the title
    a resume with a new title replaced."""

    status: SessionStatus
    created: bool
    renamed_from: str | None = None


@dataclass(frozen=True, slots=True)
class Appended:
    """An append: the stored entry, or the live entry with the same text (``duplicate``)."""

    entry: Entry
    duplicate: bool
    status: SessionStatus


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Entries packed into a budget: pins first, then matches, each group oldest first.

    ``text`` is the rendering (one line per entry, then a line saying what was left
    out); its estimate never exceeds ``budget_tokens`` unless even that line alone
    does not fit. ``matched`` counts live unpinned matches of the query (recent mode:
    live unpinned entries); ``not_fit`` of them were left out for the budget or ``limit``.
    ``pins_not_fit`` names pinned entries the budget could not hold. ``estimated`` when
    the answer was checked against the budget by an estimate, not by the server's
    tokenizer (none, or not in time: a summary was streaming); the rendering says so.
    With semantic recall on (``--embed-model``) the closing line also names the
    entries found by meaning (``by_meaning``) or why it was skipped.
    """

    session_id: str
    entries: tuple[Entry, ...]
    pinned_shown: int
    matched: int
    not_fit: int
    pins_not_fit: tuple[str, ...]
    used_tokens: int
    budget_tokens: int
    mode: Literal["query", "recent"]
    text: str
    estimated: bool = False
    #: Entries shown that semantic recall found and the query's words did not.
    by_meaning: tuple[str, ...] = ()
    #: Why semantic recall was not asked or did not answer (None when it did, or is off).
    semantic_skipped: str | None = None
    #: The answer as the tools send it, rendered once: ``text`` with the "estimated" mark
    #: when it has one, the text counted against the budget.
    rendered: str = ""


@dataclass(frozen=True, slots=True)
class CompactResult:
    """A compaction (or its plan, when ``dry_run``): what was folded into which summary.

    ``merged``: the earlier summaries it retired; the entries they folded are among ``folded``,
    summarized again from their own text, so undoing this summary brings back all of ``folded``.
    """

    session_id: str
    folded: tuple[str, ...]
    summary: Entry | None
    tokens_before: int
    tokens_after: int
    method: str
    note: str
    reason: str
    dry_run: bool
    status: SessionStatus
    merged: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UpdateResult:
    """An entry after a pin, delete or restore; ``restored`` lists entries brought back.

    ``folded_into``: a restored entry's summary, when that summary is live: it still says what
    it said of the entry (its text is never rewritten), so recall may show both. ``still_folded``:
    the entries that summary (or this entry, when it is a summary) still keeps out of recall.
    ``folds_now``: for a summary deleted or undone, each entry it folded and where it is now
    (``live``, ``deleted`` or the id of a summary that folded it since). ``merged_into``: for a
    summary a later compaction merged (retired as an undo retires it), that compaction's summary.
    """

    entry: Entry
    changed: bool
    restored: tuple[str, ...]
    status: SessionStatus
    folded_into: str | None = None
    still_folded: tuple[str, ...] = ()
    folds_now: tuple[tuple[str, str], ...] = ()
    merged_into: str | None = None


@dataclass(frozen=True, slots=True)
class SessionPage:
    """One page of the session list, latest activity first, packed into a token budget.

    ``next_offset`` is where the next page starts (None: this is the last page); ``text``
    is the rendering, one line per session and a closing line saying how to go on.
    """

    sessions: tuple[SessionInfo, ...]
    total: int
    offset: int
    next_offset: int | None
    text: str


@dataclass(frozen=True, slots=True)
class SessionContents:
    """A whole session as its journal holds it, deleted or not: its list line and every entry in order."""

    info: SessionInfo
    #: Entries of every status (live, superseded, deleted), in the order they were appended.
    entries: tuple[Entry, ...]
    #: Deleted entries that are summaries retired by a merge or an undo (SessionStatus.retired's count).
    retired: int = 0


@dataclass(frozen=True, slots=True)
class JournalCheck:
    """What reading every session journal as stored found (deleted sessions included)."""

    sessions: int
    deleted: int
    records: int
    #: Journals whose last line is torn (a crash mid-write; skipped, healed by the next append).
    torn: int
    #: Malformed lines, copied to quarantine/ and skipped.
    malformed: int


@dataclass(frozen=True, slots=True)
class EntryVectorCheck:
    """Session entries' vectors of one embedding model in ``session-vectors.sqlite3``, beside the journals."""

    #: The dimension looked at: the endpoint's, else the one stored (None: none or several stored).
    dimension: int | None
    #: Live entries (what recall ranks), and how many of them have a vector (or were refused for good).
    entries: int
    embedded: int
    #: Vectors a repair dropped: of sessions gone, of entries no journal holds (or with another text), of another model or dimension.
    dropped: int
    #: What a writer will do to a file of another layout, left as it is without ``repair`` ("": this layout).
    layout: str = ""
    #: Entries the endpoint had refused whose refusal a repair forgot: a server sends them again (a running one too).
    retried: int = 0
