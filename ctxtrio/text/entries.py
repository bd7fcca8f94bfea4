"""Extractive summaries of session entries: decisions first, repeats said once. Pure.

Sentence scoring (:mod:`.extractive`) rewards rare words, so a session of thirty
"Ran npm test" lines and eight decisions kept the status lines (issue 10: 0 of 8
decisions survived). A session is not prose; its entries are the units:

* **Decision-like entries come first**: pinned, role ``decision``, a tag such as
  ``decision`` / ``decided`` / ``adr`` / ``constraint``, or phrased as one ("Decision:",
  "we decided", "agreed", "going with", "settled on", "must not", "won't").
* **Near-duplicates are said once, with a count**: entries equal once case, digits and
  punctuation are set aside ("Ran npm test: 3 failing" and "Ran npm test: 0 failing")
  become one line, the latest wording, followed by ``(×12)``.
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

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from .plural import plural
from .terms import terms

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .tokens import TokenModel

__all__ = ["EntryText", "is_decision", "summarize_entries"]

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


def is_decision(entry: EntryText) -> bool:
    """Pinned, role decision, a decision tag, or phrased as a decision."""
    if entry.pinned or entry.role == "decision":
        return True
    if any(tag.casefold() in DECISION_TAGS for tag in entry.tags):
        return True
    return _DECISION.search(entry.text[:200]) is not None


@dataclass(slots=True)
class _Group:
    first: int  # position of its first entry
    last: int  # position of its latest entry (its wording is shown)
    count: int
    decision: bool
    score: float = 0.0


def _line(entry: EntryText) -> str:
    text = " ".join(entry.text.split())
    return text if entry.role == "note" else f"{entry.role}: {text}"


def summarize_entries(entries: Sequence[EntryText], *, target_tokens: int, model: TokenModel) -> str:
    """One line per chosen entry (or group of near-duplicates), in order, within ``target_tokens``."""
    if target_tokens < 1:
        raise ValueError(f"target_tokens must be >= 1, got {target_tokens}")
    groups = _groups(entries)
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


def _groups(entries: Sequence[EntryText]) -> list[_Group]:
    by_signature: dict[str, _Group] = {}
    groups: list[_Group] = []
    for position, entry in enumerate(entries):
        signature = entry.role + ":" + _SIGNATURE_NOISE.sub(" ", entry.text.casefold()).strip()
        group = by_signature.get(signature)
        decision = is_decision(entry)
        if group is None or decision:  # a decision is never folded into a count
            group = _Group(position, position, 0, decision)
            groups.append(group)
            if not decision:
                by_signature[signature] = group
        group.count += 1
        group.last = position
    bags = [set(terms(entries[group.last].text)) for group in groups]
    frequency: dict[str, int] = {}
    for bag in bags:
        for term in bag:
            frequency[term] = frequency.get(term, 0) + 1
    for group, bag in zip(groups, bags):
        rarity = sum(math.log(1.0 + len(groups) / frequency[term]) for term in bag)
        group.score = rarity / math.sqrt(len(bag)) if bag else 0.0
    return groups


def _shown(entries: Sequence[EntryText], group: _Group) -> str:
    line = _line(entries[group.last])
    return f"{line} (×{group.count})" if group.count > 1 else line


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
