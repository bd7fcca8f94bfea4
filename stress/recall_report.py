"""What a run of ``stress/recall_bench.py`` tells: its outcomes, the report table, the JSON of each question.

The seam is the one ``retrieval_bench.py`` / ``retrieval_report.py`` has: the bench runs the
session and asks; this module holds what a question and its outcome are, and reads them.
"""

from __future__ import annotations

import os
import statistics
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["BUDGETS", "KINDS", "MISSES", "RANK_DEPTH", "Note", "Outcome", "Question", "Run", "as_json", "report"]

BUDGETS = (250, 500, 1000)
KINDS = ("exact", "natural", "paraphrase")
MISSES = ("cut", "room", "not returned")
RANK_DEPTH = 10


@dataclass(frozen=True, slots=True)
class Note:
    key: str  # the commit hash (or a fixture's name)
    text: str


@dataclass(frozen=True, slots=True)
class Question:
    kind: str
    query: str
    entry: str  # the Note.key whose text holds the answer
    answer: str


@dataclass(slots=True)
class Outcome:
    question: Question
    rank: int | None = None  # 1-based rank of the entry among the first RANK_DEPTH matches
    found: dict[int, bool] = field(default_factory=dict)  # budget -> answer inside the recall's text
    returned: dict[int, bool] = field(default_factory=dict)  # budget -> entry among the ids returned
    miss: dict[int, str] = field(default_factory=dict)  # budget -> why not (MISSES), "" if found
    texts: dict[int, str] = field(default_factory=dict)
    doc_found: dict[int, bool] = field(default_factory=dict)  # --docs: answer inside doc_search's text
    meaning_rank: int | None = None  # --embed-model: the entry's rank among the RANK_DEPTH nearest in meaning
    skipped: int = 0  # --embed-model: answers that went without semantic recall


@dataclass(slots=True)
class Run:
    outcomes: list[Outcome]
    latencies: dict[int, list[float]]  # budget -> seconds a context_recall call took
    append_s: float
    semantic: bool = False  # run with --embed-model


def _row(label: str, counts: dict[str, int], total: int) -> str:
    return f"{label:>12} | " + " | ".join(f"{counts.get(kind, 0):>10}" for kind in KINDS) + f" | {total:>4}"


def report(found: Run, notes: list[Note]) -> None:
    outcomes = found.outcomes
    chars = [len(note.text) for note in notes]
    print(
        f"session: {len(notes)} entries, {sum(chars):,} characters (median {statistics.median(chars):.0f}, "
        f"{sum(c >= 500 for c in chars)} of 500 or more), appended in {found.append_s:.1f} s; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    per_kind = Counter(o.question.kind for o in outcomes)
    header = f"{'budget':>12} | " + " | ".join(f"{kind:>10}" for kind in KINDS) + " |  all"
    print("answer inside the context_recall text:")
    print(header)
    print(_row("questions", dict(per_kind), len(outcomes)))
    for budget in BUDGETS:
        inside = Counter(o.question.kind for o in outcomes if o.found[budget])
        print(_row(str(budget), dict(inside), sum(inside.values())))
    top3 = Counter(o.question.kind for o in outcomes if o.rank is not None and o.rank <= 3)
    print(_row("entry top 3", dict(top3), sum(top3.values())))
    mrr = sum(1 / o.rank for o in outcomes if o.rank is not None) / max(1, len(outcomes))
    print(f"context_recall MRR@{RANK_DEPTH}: {mrr:.3f}")
    if found.semantic:
        near = [o.meaning_rank for o in outcomes if o.meaning_rank is not None]
        print(
            f"entry among the {RANK_DEPTH} nearest in meaning alone: {len(near)} (top 3 {sum(r <= 3 for r in near)}); "
            f"answers without semantic recall: {sum(o.skipped for o in outcomes)}"
        )
    if outcomes and outcomes[0].doc_found:
        print("answer inside the doc_search text (each message one document):")
        for budget in BUDGETS:
            inside = Counter(o.question.kind for o in outcomes if o.doc_found[budget])
            print(_row(str(budget), dict(inside), sum(inside.values())))
    for budget in BUDGETS:
        misses = Counter(o.miss[budget] for o in outcomes if o.miss[budget])
        shown = ", ".join(f"{miss} {misses[miss]}" for miss in MISSES)
        if found.semantic:  # of the misses, those whose entry meaning alone ranks among its first 10
            meant = sum(1 for o in outcomes if o.miss[budget] and o.meaning_rank is not None)
            shown += f" ({meant} of them near by meaning)"
        wall = sorted(found.latencies[budget])
        p95 = wall[min(len(wall) - 1, int(0.95 * len(wall)))] if wall else 0.0
        print(
            f"at {budget}: misses {shown}; context_recall p50 {statistics.median(wall or [0.0]) * 1000:.1f} ms, "
            f"p95 {p95 * 1000:.1f} ms"
        )


def as_json(outcome: Outcome) -> dict[str, object]:
    q = outcome.question
    return {
        "kind": q.kind,
        "query": q.query,
        "entry": q.entry,
        "answer": q.answer,
        "rank": outcome.rank,
        "found": {str(b): v for b, v in outcome.found.items()},
        "returned": {str(b): v for b, v in outcome.returned.items()},
        "miss": {str(b): v for b, v in outcome.miss.items()},
        "doc_found": {str(b): v for b, v in outcome.doc_found.items()},
        "meaning_rank": outcome.meaning_rank,
        "skipped": outcome.skipped,
    }
