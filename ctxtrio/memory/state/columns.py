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
  point, so every process replays a race between two writers the same way. With
  ``merges`` (ids of earlier summaries, each still live and unpinned at that point), it
  also takes over the entries those summaries still fold and retires them as an undo
  does (an older reader ignores the field: both summaries live, nothing lost).
* ``patch`` — id = the target entry; one of ``pinned`` (bool), ``deleted`` (true) or
  ``restored`` (true). Restoring a deleted or superseded entry makes it live again;
  restoring a summary undoes its compaction: the entries it folded come back and the
  summary itself is retired (marked deleted).

Unknown kinds and malformed fields are ignored, so an older reader never fails on a
newer journal. Everything a read needs often (live count and tokens, pins, counts by
status) is kept up to date on apply, so status and recall never walk all entries.
Token counts come from one :class:`TokenModel`; :meth:`SessionState.retokenize` redoes
them when calibration replaces the model.

Memory is columns, not objects (about 0.3 KB per entry plus its text): per entry an
ordinal into flat arrays (seq, time, tokens, length in terms, role and status bytes,
its distinct term ids), sparse dicts for what few entries have (tags, folds, the
summary that superseded it), and the texts: those loaded from a snapshot stay in one
UTF-8 buffer and are decoded when read, the others are kept as strings.
:class:`Item` is a small view of one ordinal, made on demand. Everything here can be
written to and read back from a snapshot (:mod:`.snapshot`).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import TYPE_CHECKING, Final

from ...text.harmless import one_line
from ...text.terms import terms
from ..model import ROLES, Role
from .base import entry_line, record_time, strings_of, text_hash
from .bm25 import TermIndex
from .entries import Item, ItemMap, ItemSequence

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from ...store.records import Record, StoredRecord
    from ...text.tokens import TokenModel

__all__ = ["Item", "SessionState", "entry_line", "text_hash"]

_ROLE_CODE: Final = {role: code for code, role in enumerate(ROLES)}
_SUMMARY: Final = _ROLE_CODE["summary"]


class SessionState:
    """A session as its journal says, up to ``applied_offset``. Not thread-safe."""

    def __init__(self, session_id: str, model: TokenModel, *, light: bool = False) -> None:
        self.session_id = session_id
        self.model = model
        #: Statuses and counts only (no texts, tokens or search terms): enough to list a session.
        self.light = light
        self.title = session_id
        self.exists = False
        #: When the session was deleted (a ``session`` record with ``deleted: true``), else None.
        self.deleted_at: float | None = None
        self.applied_offset = 0
        #: Start and seq of the last record applied (a snapshot proves its journal with them).
        self.last_record = (0, 0)
        self.created = 0.0
        self.last_activity = 0.0
        self.live_count = 0
        self.live_tokens = 0
        self.pinned_tokens = 0
        self.superseded = 0
        self.deleted = 0
        self.summaries = 0
        self.index = TermIndex()
        # -- columns, one value per entry (ordinal) --
        #: Ids are ``e<seq>`` but for these entries (ordinal -> id, and back).
        self.odd_ids: dict[int, str] = {}
        self.odd_ordinals: dict[str, int] = {}
        #: Whether seqs ascend with ordinals (they do when a journal is read in order),
        #: so an ``e<seq>`` id is found by bisection; else every id is in ``_all``.
        self.seqs_ascend = True
        self._all: dict[str, int] | None = None
        self.seqs: array[int] = array("q")
        self.times: array[float] = array("d")
        self.tokens: array[int] = array("q")
        self.lengths: array[int] = array("q")
        self.hashes: array[int] = array("q")
        self.roles = bytearray()
        self.pinned = bytearray()
        self.deleted_flags = bytearray()
        self.live = bytearray()
        # -- sparse --
        self.tags: dict[int, tuple[str, ...]] = {}
        self.folds: dict[int, tuple[str, ...]] = {}
        self.merges: dict[int, tuple[int, ...]] = {}  # a summary -> the earlier summaries it merged
        self.merged_into: dict[int, int] = {}  # the reverse: a summary merged -> the one that merged it
        self.superseded_by: dict[int, int] = {}
        self.pin_set: dict[int, None] = {}
        # -- texts: entries below ``blob_count`` live in ``blob`` (UTF-8), the rest in ``tail_texts`` --
        self.blob: bytes | memoryview = b""
        self.blob_starts: array[int] = array("q", [0])
        self.tail_texts: list[str] = []
        self._by_hash: dict[int, int | list[int]] | None = None
        self._known_terms: Mapping[str, list[str]] | None = None

    @property
    def order(self) -> ItemSequence:
        return ItemSequence(self)

    @property
    def items(self) -> ItemMap:
        return ItemMap(self)

    @property
    def pins(self) -> dict[str, Item]:
        """Live pinned entries by id, oldest first."""
        return {self.id_of(ordinal): Item(self, ordinal) for ordinal in sorted(self.pin_set)}

    def __len__(self) -> int:
        """How many entries (of any status) the session holds."""
        return len(self.seqs)

    def id_of(self, ordinal: int) -> str:
        odd = self.odd_ids.get(ordinal)
        return odd if odd is not None else f"e{self.seqs[ordinal]}"

    def ordinal_of(self, item_id: str) -> int | None:
        """The position of entry ``item_id``, or None."""
        odd = self.odd_ordinals.get(item_id)
        if odd is not None:
            return odd
        if not self.seqs_ascend:
            if self._all is None:
                self._all = {self.id_of(o): o for o in range(len(self.seqs))}
            return self._all.get(item_id)
        if not item_id.startswith("e") or not item_id[1:].isdigit() or item_id != f"e{int(item_id[1:])}":
            return None
        seq = int(item_id[1:])
        ordinal = bisect_left(self.seqs, seq)
        if ordinal < len(self.seqs) and self.seqs[ordinal] == seq and ordinal not in self.odd_ids:
            return ordinal
        return None

    @property
    def blob_count(self) -> int:
        return len(self.blob_starts) - 1

    def text(self, ordinal: int) -> str:
        count = len(self.blob_starts) - 1
        if ordinal < count:
            starts = self.blob_starts
            return str(self.blob[starts[ordinal] : starts[ordinal + 1]], "utf-8", "surrogatepass")
        return self.tail_texts[ordinal - count]

    def entry_terms(self, ordinal: int) -> list[int]:
        """The distinct term ids of an entry, from its text (not kept: liveness changes are rare)."""
        term_id = self.index.term_id
        found = (term_id(term) for term in dict.fromkeys(terms(self.text(ordinal))))
        return [found_id for found_id in found if found_id is not None]

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
                seq = record.data.get("seq")
                self.last_record = (record.offset, seq if isinstance(seq, int) else 0)
        finally:
            self._known_terms = None
        self.applied_offset = max(self.applied_offset, end)

    def apply_record(self, data: Record) -> None:
        kind = data.get("kind")
        ts = record_time(data.get("ts"))
        if ts is not None:
            if not self.exists:
                self.created = float(ts)
            self.last_activity = max(self.last_activity, float(ts))
        self.exists = True
        if kind == "entry":
            self._add_entry(data)
        elif kind == "patch":
            ordinal = self.ordinal_of(str(data.get("id")))
            if ordinal is not None:
                self._patch(ordinal, data)
        elif kind == "session":
            title = data.get("title")
            if isinstance(title, str) and title:
                self.title = one_line(title)  # one stored before titles were made harmless, too
            deleted = data.get("deleted")
            if deleted is True:
                self.deleted_at = ts if ts is not None else 0.0
            elif deleted is False:
                self.deleted_at = None

    def _add_entry(self, data: Record) -> None:
        item_id = str(data.get("id"))
        text = data.get("text")
        if not isinstance(text, str) or self.ordinal_of(item_id) is not None:
            return
        text = text.strip()  # the service stores texts stripped; anything else is shown stripped
        role = data.get("role")
        seq = data.get("seq")
        ts = record_time(data.get("ts"))
        tags = strings_of(data.get("tags"))
        pinned = data.get("pinned") is True
        role_name: Role = role if isinstance(role, str) and role in _ROLE_CODE else "note"
        if self.light:
            text = ""
        ordinal = len(self.seqs)
        seq_value = seq if isinstance(seq, int) and not isinstance(seq, bool) else 0
        if self.seqs and seq_value <= self.seqs[-1]:
            self.seqs_ascend = False
        self.seqs.append(seq_value)
        if item_id != f"e{seq_value}":
            self.odd_ids[ordinal] = item_id
            self.odd_ordinals[item_id] = ordinal
        if self._all is not None:
            self._all[item_id] = ordinal
        self.times.append(ts if ts is not None else 0.0)
        self.tokens.append(0 if self.light else self.model.estimate(entry_line(item_id, role_name, pinned, tags, text)))
        self.roles.append(_ROLE_CODE[role_name])
        self.pinned.append(pinned)
        self.deleted_flags.append(0)
        self.live.append(0)
        if tags:
            self.tags[ordinal] = tags
        self.tail_texts.append(text)
        digest = 0 if self.light else text_hash(text)
        self.hashes.append(digest)
        if self._by_hash is not None:
            _remember(self._by_hash, digest, ordinal)
        known = self._known_terms.get(text) if self._known_terms is not None else None
        term_ids: list[int] = []
        length = 0
        if not self.light:
            term_ids, length = self.index.add(ordinal, known if known is not None else terms(text))
        self.lengths.append(length)
        self._account(ordinal, 1, term_ids)
        self._fold_in(ordinal, strings_of(data.get("folds")), strings_of(data.get("merges")))

    def _fold_in(self, summary: int, folds: tuple[str, ...], merges: tuple[str, ...]) -> None:
        """``summary`` supersedes ``folds`` and, from each summary it ``merges``, what that one still folds."""
        if not (folds or merges):
            return
        merged = [o for o in map(self.ordinal_of, merges) if o is not None and self._mergeable(o)]
        for target in [o for earlier in merged for o in self._still_folded(earlier) if not self.deleted_flags[o]]:
            self.superseded_by[target] = summary  # superseded before and after: no total changes
        self.folds[summary] = tuple(self._fold(summary, folds))
        if merged:
            self.merges[summary] = tuple(merged)
        for retired in merged:  # as an undo retires a summary, without bringing its entries back first
            self.merged_into[retired] = summary
            self._account(retired, -1)
            self.deleted_flags[retired] = 1
            self._account(retired, 1)

    def _mergeable(self, ordinal: int) -> bool:
        return bool(self.live[ordinal]) and not self.pinned[ordinal] and self.roles[ordinal] == _SUMMARY

    def _still_folded(self, summary: int) -> list[int]:
        """The entries ``summary`` supersedes, oldest first: by the reverse map, as one it merged holds only its
        own folds (walking each merge's chain of ids replayed a week's journal in twice the time)."""
        return sorted(o for o, by in self.superseded_by.items() if by == summary)

    def _fold(self, summary: int, folds: tuple[str, ...]) -> Iterator[str]:
        for folded_id in folds:
            target = self.ordinal_of(folded_id)
            if target is not None and self.live[target] and not self.pinned[target] and self.roles[target] != _SUMMARY:
                self._account(target, -1)
                self.superseded_by[target] = summary
                self._account(target, 1)
                yield folded_id

    def _patch(self, ordinal: int, data: Record) -> None:
        self._account(ordinal, -1)
        pinned = data.get("pinned")
        if isinstance(pinned, bool) and pinned != bool(self.pinned[ordinal]):
            self.pinned[ordinal] = pinned
            if not self.light:
                self.tokens[ordinal] = self.model.estimate(Item(self, ordinal).line())
        if data.get("deleted") is True:
            self.deleted_flags[ordinal] = 1
        if data.get("restored") is True:
            if ordinal in self.folds:
                # Every entry it supersedes lets go of it; one deleted meanwhile stays deleted.
                for folded in self._still_folded(ordinal):
                    self._account(folded, -1)
                    del self.superseded_by[folded]
                    self._account(folded, 1)
                self.deleted_flags[ordinal] = 1
            else:
                self.deleted_flags[ordinal] = 0
                self.superseded_by.pop(ordinal, None)
        self._account(ordinal, 1)

    def _account(self, ordinal: int, sign: int, term_ids: Iterable[int] | None = None) -> None:
        """Add (``sign`` 1) or remove (-1) what entry ``ordinal`` contributes to the totals.

        Every change of an entry happens between its removal and its re-addition.
        ``term_ids`` are the entry's distinct terms when the caller has them.
        """
        if self.deleted_flags[ordinal]:
            self.deleted += sign
        elif ordinal in self.superseded_by:
            self.superseded += sign
        else:
            self.live[ordinal] = sign > 0
            if not self.light:
                self.index.account(
                    self.entry_terms(ordinal) if term_ids is None else term_ids, self.lengths[ordinal], sign
                )
            tokens = self.tokens[ordinal]
            self.live_count += sign
            self.live_tokens += sign * tokens
            if self.roles[ordinal] == _SUMMARY:
                self.summaries += sign
            if self.pinned[ordinal]:
                self.pinned_tokens += sign * tokens
                if sign > 0:
                    self.pin_set[ordinal] = None
                else:
                    self.pin_set.pop(ordinal, None)

    # -- reading --------------------------------------------------------------------

    def retokenize(self, model: TokenModel, *, force: bool = False) -> None:
        """Recount every entry with ``model`` (calibration replaced the previous one)."""
        if model is self.model and not force:
            return
        self.model = model
        self.live_tokens = self.pinned_tokens = 0
        for item in self.order:
            tokens = self.tokens[item.ordinal] = model.estimate(item.line())
            if item.live:
                self.live_tokens += tokens
                if item.pinned:
                    self.pinned_tokens += tokens

    def find_live_text(self, text: str) -> Item | None:
        """A live entry whose text equals ``text`` (both stripped), if any."""
        text = text.strip()
        if self._by_hash is None:
            by_hash: dict[int, int | list[int]] = {}
            for ordinal, digest in enumerate(self.hashes):
                _remember(by_hash, digest, ordinal)
            self._by_hash = by_hash
        found = self._by_hash.get(text_hash(text))
        for ordinal in (found,) if isinstance(found, int) else (found or ()):
            if self.live[ordinal] and self.text(ordinal) == text:
                return Item(self, ordinal)
        return None

    def unfoldable(self, summary: Item) -> list[Item]:
        """The entries ``summary`` folded that it still supersedes and an undo brings back: not one deleted
        since (out of recall by itself; an undo said "4 entries (e2..e5) are live again" of 3), as
        :meth:`~ctxtrio.memory.model.Entry.still_folded_by` says of the public entries."""
        return [Item(self, o) for o in self._still_folded(summary.ordinal) if not self.deleted_flags[o]]

    def foldable(self) -> list[Item]:
        """Live, unpinned, non-summary entries, oldest first (compaction candidates)."""
        live, pinned, roles = self.live, self.pinned, self.roles
        return [Item(self, o) for o in range(len(self.seqs)) if live[o] and not pinned[o] and roles[o] != _SUMMARY]

    def sorted_pins(self) -> list[Item]:
        return [Item(self, ordinal) for ordinal in sorted(self.pin_set)]


def _remember(by_hash: dict[int, int | list[int]], digest: int, ordinal: int) -> None:
    found = by_hash.get(digest)
    if found is None:
        by_hash[digest] = ordinal
    elif isinstance(found, int):
        by_hash[digest] = [found, ordinal]
    else:
        found.append(ordinal)
