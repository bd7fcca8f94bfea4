"""Extractive summaries of session entries: decisions first, repeats said once. Pure.

Sentence scoring (:mod:`.extractive`) rewards rare words, so a session of thirty
"Ran npm test" lines and eight decisions kept the status lines (issue 10: 0 of 8
decisions survived). A session is not prose; its entries are the units:

* **Decision-like entries come first**: pinned, role ``decision``, a tag such as
  ``decision`` / ``decided`` / ``adr`` / ``constraint``, or phrased as one ("Decision:",
  "we decided", "agreed", "going with", "settled on", "must not", "won't").
* **Near-duplicates are said once, with a count**: entries equal once case, digits and
  punctuation are set aside ("Ran npm test: 3 failing" and "Ran npm test: 0 failing")
  become one line, the latest wording, followed by ``(×12)``. Room left once the lines
  are chosen goes to their numbers: a group whose entries differ only in them is shown
  as one wording listing each varying number's values (:mod:`.folds`), the most ranked
  group first, since for measurements, counts and versions the numbers are the content.
* The rest are ranked by how much they say that no other entry says (the summed
  rarity of their terms), a repeated group counting once.

Chosen lines keep the entries' order and their ``role: `` prefix (none for notes). If
the decisions alone do not fit, the newest are kept whole and a first line says how many
older ones were left out. Cutting each to an equal share instead left six decisions at
a 50-token target as bare labels ("Decision 0:\nDecision 1:..."), which say nothing; the
newest are kept because a later decision is the one in force when two disagree, and the
undo brings back every folded entry anyway. Every other line is a verbatim entry (or,
when not even one decision fits whole, a verbatim start of the newest, marked "...").
"""

from __future__ import annotations

import hashlib
import math
import re
from array import array
from collections import Counter
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Final

from .folds import Fold, fitting_fold, fold
from .plural import plural
from .terms import terms

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .tokens import TokenModel

__all__ = ["EntryMemo", "EntryText", "is_decision", "summarize_entries"]

DECISION_TAGS: Final = frozenset({"decision", "decisions", "decided", "adr", "constraint", "requirement", "agreed"})
_DECISION: Final = re.compile(
    r"^\s*(?:decision|decided|resolved|agreed|conclusion)\b"
    r"|\b(?:we|i|team)\s+(?:decided|agreed|chose|will|'ll|settled)\b"
    r"|\b(?:decided to|agreed to|going with|settled on|opted for|must not|must never|won't|will not)\b",
    re.IGNORECASE,
)
_SAYS_SOMETHING: Final = 10  # tokens: a shorter start of a decision is little more than its label
_CUT_MARK: Final = " ..."  # ends a line cut to fit (see _cut)
_SIGNATURE_NOISE: Final = re.compile(r"[\d\W_]+")


@dataclass(frozen=True, slots=True)
class EntryText:
    """What a summary needs of one session entry."""

    role: str
    text: str
    tags: tuple[str, ...] = ()
    pinned: bool = False
    #: What an :class:`EntryMemo` remembers it by: its id, whose role and text never change ("": not remembered).
    key: str = ""


class EntryMemo:
    """What :func:`summarize_entries` reads of each entry's text, kept across the summaries of one session.

    A merging compaction summarizes every entry folded so far (``memory/compaction/plan.py``): on 20,000
    notes (8.7 M tokens) each one took 2.3-3.0 s, three quarters of it the terms of every entry again
    (:func:`~.terms.terms`). Remembered per entry: the digest of its near-duplicate signature (16 bytes)
    and its distinct terms as ids of this memo's vocabulary (4 bytes each), sorted, so a score sums in
    one order. About 300 bytes an entry plus 4 a distinct term, and each distinct term of the session
    once: 21.8 MB for those 20,000 notes (158,478 distinct terms, most from pasted logs). Not thread-safe: one summary at a time per memo (a session compacts one at a time).
    """

    __slots__ = ("_signatures", "_terms", "_vocabulary")

    def __init__(self) -> None:
        self._signatures: dict[str, tuple[bytes, bool]] = {}
        self._terms: dict[str, array[int]] = {}
        self._vocabulary: dict[str, int] = {}

    def __len__(self) -> int:
        """How many entries it remembers."""
        return len(self._signatures)

    def signature(self, entry: EntryText) -> tuple[bytes, bool]:
        """The digest of ``entry``'s near-duplicate signature (:func:`_signature`), and whether its text is
        phrased as a decision."""
        found = self._signatures.get(entry.key) if entry.key else None
        if found is None:
            found = (_signature(entry), _phrased(entry.text))
            if entry.key:
                self._signatures[entry.key] = found
        return found

    def term_ids(self, entry: EntryText) -> array[int]:
        """``entry``'s distinct terms as ids, sorted (read only for the latest entry of each group)."""
        found = self._terms.get(entry.key) if entry.key else None
        if found is None:
            vocabulary = self._vocabulary
            found = array("i", sorted(vocabulary.setdefault(term, len(vocabulary)) for term in set(terms(entry.text))))
            if entry.key:
                self._terms[entry.key] = found
        return found


def is_decision(entry: EntryText) -> bool:
    """Pinned, role decision, a decision tag, or phrased as a decision."""
    return _decided(entry, phrased=_phrased(entry.text))


def _decided(entry: EntryText, *, phrased: bool) -> bool:
    """:func:`is_decision`, told whether the text is phrased as one."""
    return (
        phrased
        or entry.pinned
        or entry.role == "decision"
        or any(tag.casefold() in DECISION_TAGS for tag in entry.tags)
    )


def _phrased(text: str) -> bool:
    return _DECISION.search(text[:200]) is not None


@dataclass(slots=True)
class _Group:
    first: int  # position of its first entry
    last: int  # position of its latest entry (its wording is shown)
    count: int
    decision: bool
    score: float = 0.0
    members: list[int] = field(default_factory=list)  # positions of its entries, in order


def _line(entry: EntryText) -> str:
    text = " ".join(entry.text.split())
    return text if entry.role == "note" else f"{entry.role}: {text}"


def summarize_entries(
    entries: Sequence[EntryText], *, target_tokens: int, model: TokenModel, memo: EntryMemo | None = None
) -> str:
    """One line per chosen entry (or group of near-duplicates), in order, within ``target_tokens``.

    ``memo`` keeps what is read of each keyed entry's text for the next call (the same lines either way)."""
    if target_tokens < 1:
        raise ValueError(f"target_tokens must be >= 1, got {target_tokens}")
    groups = _groups(entries, EntryMemo() if memo is None else memo)
    shown = {id(group): _shown(entries, group) for group in groups}
    decisions = [group for group in groups if group.decision]
    others = sorted((g for g in groups if not g.decision), key=lambda g: (-g.score, g.first))
    chosen, used = _decision_lines(decisions, shown, target_tokens, model)
    for group in others if -1 not in chosen else ():  # decisions left out outrank the rest
        line = shown[id(group)]
        cost = model.estimate(line) + 1
        if used + cost <= target_tokens:
            chosen[group.first] = line
            used += cost
    shown_groups = [g for g in others if g.count > 1 and g.first in chosen] if -1 not in chosen else []
    folds = {id(group): fold([_line(entries[at]) for at in group.members]) for group in shown_groups}
    for most in (1, None):  # the room left to the numbers of the groups shown: each its first and last, then more
        for group in shown_groups:
            found = folds[id(group)]
            if found is not None:
                used += _with_numbers(found, group.first, chosen, target_tokens - used, model, most)
    if not chosen and groups:
        best = others[0] if others else groups[0]
        chosen[best.first] = _cut(shown[id(best)], target_tokens, model)
    return "\n".join(chosen[position] for position in sorted(chosen))


def _decision_lines(
    decisions: Sequence[_Group], shown: dict[int, str], target_tokens: int, model: TokenModel
) -> tuple[dict[int, str], int]:
    """The decisions' lines by position and their tokens: all whole if they fit, else the newest whole
    and a first line (position -1) saying how many older ones were left out."""
    costs = [model.estimate(shown[id(group)]) + 1 for group in decisions]
    if sum(costs) <= target_tokens:
        return {group.first: shown[id(group)] for group in decisions}, sum(costs)
    room = target_tokens - model.estimate(_left_out(len(decisions))) - 1
    chosen: dict[int, str] = {}
    used = 0
    for group, cost in zip(reversed(decisions), reversed(costs)):
        if used + cost > room:
            break  # an older, shorter one kept after a gap would make "older ... left out" untrue
        chosen[group.first] = shown[id(group)]
        used += cost
    if not chosen:  # not even the newest fits whole: its start, if it says more than a label ("Decis")
        newest = decisions[-1]
        start = _cut(shown[id(newest)], max(1, room - 1), model)
        if model.estimate(start.removesuffix(_CUT_MARK)) >= _SAYS_SOMETHING:  # the words, not the mark
            chosen[newest.first] = start
            used = model.estimate(start) + 1
    note = _left_out(len(decisions) - len(chosen), older=bool(chosen))
    chosen[-1] = note
    return chosen, used + model.estimate(note) + 1


def _left_out(count: int, *, older: bool = True) -> str:
    them = "them" if count != 1 else "it"  # a small model reads the pronoun as a count too
    return f"({plural(count, 'older decision' if older else 'decision')} left out; restore shows {them})"


def _groups(entries: Sequence[EntryText], memo: EntryMemo) -> list[_Group]:
    by_signature: dict[bytes, _Group] = {}
    groups: list[_Group] = []
    for position, entry in enumerate(entries):
        signature, phrased = memo.signature(entry)
        group = by_signature.get(signature)
        decision = _decided(entry, phrased=phrased)
        if group is None or decision:  # a decision is never folded into a count
            group = _Group(position, position, 0, decision)
            groups.append(group)
            if not decision:
                by_signature[signature] = group
        group.count += 1
        group.last = position
        group.members.append(position)
    bags = [memo.term_ids(entries[group.last]) for group in groups]
    # Each term's rarity once, not once per group holding it: the same values summed in the same order.
    rarity = {term: math.log(1.0 + len(groups) / count) for term, count in Counter(chain.from_iterable(bags)).items()}
    for group, bag in zip(groups, bags):
        group.score = sum(map(rarity.__getitem__, bag)) / math.sqrt(len(bag)) if bag else 0.0
    return groups


def _signature(entry: EntryText) -> bytes:
    """Equal for entries equal but for case, digits and punctuation ("Ran npm test: 3 failing")."""
    signature = entry.role + ":" + _SIGNATURE_NOISE.sub(" ", entry.text.casefold()).strip()
    return hashlib.blake2b(signature.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _shown(entries: Sequence[EntryText], group: _Group) -> str:
    line = _line(entries[group.last])
    return f"{line} (×{group.count})" if group.count > 1 else line


def _with_numbers(
    found: Fold, position: int, chosen: dict[int, str], room: int, model: TokenModel, most: int | None
) -> int:
    """Shows ``found``'s numbers in the line chosen at ``position``, up to ``most`` values at each end of a
    slot (None: all that fit), if they fit in ``room`` tokens more; the tokens added."""
    cost = model.estimate(chosen[position])
    line = fitting_fold(found, cost + room, model, most=most)
    if line is None:
        return 0
    chosen[position] = line
    return model.estimate(line) - cost


def _cut(line: str, max_tokens: int, model: TokenModel) -> str:
    """``line``'s start within ``max_tokens``, ending in "..." when cut: without it a cut decision reads as
    whole ("Decision 1: retry webhook batch 1" for "... batch 1 later."), and a cut before a "not" or an
    "only if" turns it around."""
    if model.fitting_prefix(line, max_tokens) >= len(line):
        return line
    size = model.fitting_prefix(line, max(1, max_tokens - model.estimate(_CUT_MARK)))
    space = line.rfind(" ", 0, size)
    start = (line[:space] if space > size * 0.6 else line[:size]).rstrip() or line[: max(1, size)]
    return start + _CUT_MARK
