"""One session's journal replayed into memory, with running totals (pure, no trio).

Records, applied in journal order (last write wins; the journal is never rewritten):

* ``session`` — ``title``. Written when the session is opened or first appended to.
  With ``deleted`` (bool) instead: the whole session is deleted (true) or restored
  (false). A deleted session keeps its records until ``prune`` removes the journal.
* ``entry`` — ``text``, ``role``, ``tags``, ``pinned``; id ``e<seq>``. A compaction is
  one ``entry`` record of role ``summary`` that also carries ``folds`` (the ids it
  replaces), ``tokens_before``, ``tokens_after``, ``method`` and ``reason``: one line,
  so a crash can never leave a summary without its folding or the reverse. Replay
  supersedes each listed entry that is still live, unpinned and not a summary at that
  point, so every process replays a race between two writers the same way.
* ``patch`` — id = the target entry; one of ``pinned`` (bool), ``deleted`` (true) or
  ``restored`` (true). Restoring a deleted or superseded entry makes it live again;
  restoring a summary undoes its compaction: the entries it folded come back and the
  summary itself is retired (marked deleted).

Unknown kinds and malformed fields are ignored, so an older reader never fails on a
newer journal. Everything a read needs often (live count and tokens, pins, counts by
status) is kept up to date on apply, so status and recall never walk all entries.
Token counts come from one :class:`TokenModel`; :meth:`SessionState.retokenize` redoes
them when calibration replaces the model.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from ..store.records import JSON, Record, StoredRecord
from ..text.terms import terms
from ..text.tokens import TokenModel
from .bm25 import TermIndex
from .model import ROLES, Entry, EntryStatus, Role

__all__ = ["Item", "SessionState", "entry_line"]


def entry_line(item_id: str, role: str, pinned: bool, tags: Iterable[str], text: str) -> str:
    """How recall shows an entry: ``[e12 decision pinned #auth] text`` plus a newline."""
    head = f"{item_id} {role} pinned" if pinned else f"{item_id} {role}"
    for tag in tags:
        head += " #" + tag
    return f"[{head}] {text}\n"


class Item:
    """The mutable state of one entry inside :class:`SessionState`."""

    __slots__ = (
        "alive", "deleted", "folds", "id", "length", "ordinal", "pinned", "role", "seq", "snap", "superseded_by",
        "tags", "terms", "text", "tokens", "ts",
    )

    def __init__(
        self,
        item_id: str,
        seq: int,
        ordinal: int,
        ts: float,
        role: Role,
        text: str,
        tags: tuple[str, ...],
        pinned: bool,
    ) -> None:
        self.id = item_id
        self.seq = seq
        self.ordinal = ordinal
        self.ts = ts
        self.role: Role = role
        self.text = text
        self.tags = tags
        self.pinned = pinned
        self.deleted = False
        self.superseded_by: str | None = None
        self.folds: tuple[str, ...] = ()
        self.tokens = 0
        #: Kept equal to ``live`` by SessionState (read on every search posting).
        self.alive = False
        #: Search terms: how many, and the distinct ones (see bm25.TermIndex).
        self.length = 0
        self.terms: tuple[str, ...] = ()
        #: The last snapshot, dropped on every change (recall returns the same entries often).
        self.snap: Entry | None = None

    @property
    def live(self) -> bool:
        return not self.deleted and self.superseded_by is None

    @property
    def status(self) -> EntryStatus:
        if self.deleted:
            return "deleted"
        return "live" if self.superseded_by is None else "superseded"

    def line(self) -> str:
        return entry_line(self.id, self.role, self.pinned, self.tags, self.text)

    def snapshot(self) -> Entry:
        snap = self.snap
        if snap is None:
            snap = self.snap = Entry(
                self.id, self.seq, self.role, self.text, self.tags, self.pinned, self.status,
                self.ts, self.tokens, self.superseded_by, self.folds,
            )
        return snap


class SessionState:
    """A session as its journal says, up to ``applied_offset``. Not thread-safe."""

    def __init__(self, session_id: str, model: TokenModel) -> None:
        self.session_id = session_id
        self.model = model
        self.title = session_id
        self.exists = False
        #: When the session was deleted (a ``session`` record with ``deleted: true``), else None.
        self.deleted_at: float | None = None
        self.applied_offset = 0
        self.created = 0.0
        self.last_activity = 0.0
        self.items: dict[str, Item] = {}
        self.order: list[Item] = []
        self._by_text: dict[str, list[Item]] = {}
        self.pins: dict[str, Item] = {}
        self.index: TermIndex[Item] = TermIndex()
        self._known_terms: Mapping[str, list[str]] | None = None
        self.live_count = 0
        self.live_tokens = 0
        self.pinned_tokens = 0
        self.superseded = 0
        self.deleted = 0
        self.summaries = 0

    # -- applying records -----------------------------------------------------------

    def apply(
        self, records: Iterable[StoredRecord], end: int, *, known_terms: Mapping[str, list[str]] | None = None
    ) -> None:
        """Apply records read or written up to journal offset ``end``.

        ``known_terms`` maps entry texts to their search terms when the caller computed
        them already (an append computes them before the write, while nothing competes
        for the interpreter).
        """
        self._known_terms = known_terms
        try:
            for record in records:
                self.apply_record(record.data)
        finally:
            self._known_terms = None
        self.applied_offset = max(self.applied_offset, end)

    def apply_record(self, data: Record) -> None:
        kind = data.get("kind")
        ts = data.get("ts")
        if isinstance(ts, (int, float)):
            if not self.exists:
                self.created = float(ts)
            self.last_activity = max(self.last_activity, float(ts))
        self.exists = True
        if kind == "entry":
            self._add_entry(data)
        elif kind == "patch":
            item = self.items.get(str(data.get("id")))
            if item is not None:
                self._patch(item, data)
        elif kind == "session":
            title = data.get("title")
            if isinstance(title, str) and title:
                self.title = title
            deleted = data.get("deleted")
            if deleted is True:
                self.deleted_at = float(ts) if isinstance(ts, (int, float)) else 0.0
            elif deleted is False:
                self.deleted_at = None

    def _add_entry(self, data: Record) -> None:
        item_id = str(data.get("id"))
        text = data.get("text")
        if item_id in self.items or not isinstance(text, str):
            return
        text = text.strip()  # the service stores texts stripped; anything else is shown stripped
        role = data.get("role")
        seq = data.get("seq")
        ts = data.get("ts")
        item = Item(
            item_id,
            seq if isinstance(seq, int) else 0,
            len(self.order),
            float(ts) if isinstance(ts, (int, float)) else 0.0,
            role if role in ROLES else "note",
            text,
            _strings(data.get("tags")),
            data.get("pinned") is True,
        )
        item.tokens = self.model.estimate(item.line())
        known = self._known_terms.get(text) if self._known_terms is not None else None
        item.terms = self.index.add(item, known if known is not None else terms(text))
        self.items[item_id] = item
        self.order.append(item)
        self._by_text.setdefault(text, []).append(item)
        self._account(item, 1)
        folds = _strings(data.get("folds"))
        if folds:
            item.folds = tuple(self._fold(item, folds))

    def _fold(self, summary: Item, folds: tuple[str, ...]) -> Iterator[str]:
        for folded_id in folds:
            target = self.items.get(folded_id)
            if target is not None and target.live and not target.pinned and target.role != "summary":
                self._account(target, -1)
                target.superseded_by = summary.id
                self._account(target, 1)
                yield folded_id

    def _patch(self, item: Item, data: Record) -> None:
        self._account(item, -1)
        pinned = data.get("pinned")
        if isinstance(pinned, bool) and pinned != item.pinned:
            item.pinned = pinned
            item.tokens = self.model.estimate(item.line())
        if data.get("deleted") is True:
            item.deleted = True
        if data.get("restored") is True:
            if item.folds:
                for folded in self.unfoldable(item):
                    self._account(folded, -1)
                    folded.superseded_by = None
                    self._account(folded, 1)
                item.deleted = True
            else:
                item.deleted = False
                item.superseded_by = None
        self._account(item, 1)

    def _account(self, item: Item, sign: int) -> None:
        """Add (``sign`` 1) or remove (-1) what ``item`` contributes to the totals.

        Every change of an item happens between its removal and its re-addition, so
        this is also where its cached snapshot is dropped.
        """
        item.snap = None
        if item.deleted:
            self.deleted += sign
        elif item.superseded_by is not None:
            self.superseded += sign
        else:
            item.alive = sign > 0
            self.index.account(item, item.terms, sign)
            self.live_count += sign
            self.live_tokens += sign * item.tokens
            if item.role == "summary":
                self.summaries += sign
            if item.pinned:
                self.pinned_tokens += sign * item.tokens
                if sign > 0:
                    self.pins[item.id] = item
                else:
                    self.pins.pop(item.id, None)

    # -- reading --------------------------------------------------------------------

    def retokenize(self, model: TokenModel) -> None:
        """Recount every entry with ``model`` (calibration replaced the previous one)."""
        if model is self.model:
            return
        self.model = model
        self.live_tokens = self.pinned_tokens = 0
        for item in self.order:
            item.snap = None
            item.tokens = model.estimate(item.line())
            if item.live:
                self.live_tokens += item.tokens
                if item.pinned:
                    self.pinned_tokens += item.tokens

    def find_live_text(self, text: str) -> Item | None:
        """A live entry whose text equals ``text`` (both stripped), if any."""
        for item in self._by_text.get(text.strip(), ()):
            if item.live:
                return item
        return None

    def unfoldable(self, summary: Item) -> list[Item]:
        """The entries ``summary`` folded that it still supersedes."""
        found = (self.items.get(folded_id) for folded_id in summary.folds)
        return [item for item in found if item is not None and item.superseded_by == summary.id]

    def foldable(self) -> list[Item]:
        """Live, unpinned, non-summary entries, oldest first (compaction candidates)."""
        return [item for item in self.order if item.live and not item.pinned and item.role != "summary"]

    def sorted_pins(self) -> list[Item]:
        return sorted(self.pins.values(), key=_ordinal)


def _ordinal(item: Item) -> int:
    return item.ordinal


def _strings(value: JSON) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str))
