"""What a retrieval_bench.py run tells: each question's outcome, why a miss is missing
(``--classify``), the table of rates, and what ``--json``, ``--texts`` and ``--show`` ask for.

Moved from ``stress/retrieval_bench.py`` unchanged: that module runs the bench (ingest, wait
for the embeddings, ask), this one reads its outcomes. The miss classes are described in
``retrieval_bench.py``'s docstring.
"""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
from retrieval_questions import KINDS, Question, doc_id_for, normalized

from ctxtrio.docs.service import repository_of

if TYPE_CHECKING:
    import argparse

    from ctxtrio._wiring import Wiring

__all__ = ["BUDGETS", "MISSES", "Outcome", "classify", "report", "write"]

BUDGETS = (500, 1000, 2000)


@dataclass(slots=True)
class Outcome:
    question: Question
    rank: int | None = None  # 1-based rank of the first hit from the right file, within 10
    found: dict[int, bool] = field(default_factory=dict)  # budget -> answer inside the text
    texts: dict[int, str] = field(default_factory=dict)
    skipped: int = 0  # searches that said semantic recall was skipped
    ranked: list[tuple[str, int]] = field(default_factory=list)  # (doc_id, chunk) of the first 10 hits
    shown: list[tuple[str, int]] = field(default_factory=list)  # (doc_id, chunk) shown at 1,000 tokens
    miss: str = ""  # why the answer is not inside at 1,000 tokens (--classify)


MISSES = ("window", "room", "adjacent", "elsewhere", "not shown")


async def classify(ctx: Wiring, outcomes: list[Outcome]) -> None:
    """Set each 1,000-token miss's class (see retrieval_bench.py's docstring) and print them, then a table."""
    repo = repository_of(ctx.documents)
    print("misses at 1000 tokens:")
    for outcome in outcomes:
        if outcome.found[1000]:
            continue
        wanted = doc_id_for(outcome.question.file)
        _, doc = await repo.load(wanted)
        answer = normalized(outcome.question.answer)
        holding = {chunk.index for chunk in doc.chunks if answer in normalized(chunk.text)}
        shown = {index for doc_id, index in outcome.shown if doc_id == wanted}
        if holding & shown:
            outcome.miss = "window"
        elif any((wanted, index) in outcome.ranked for index in holding):
            outcome.miss = "room"
        elif any(abs(index - held) <= 1 for index in shown for held in holding):
            outcome.miss = "adjacent"
        else:
            outcome.miss = "elsewhere" if shown else "not shown"
        print(f"  {outcome.miss:>9} | {outcome.question.kind:>10} | {outcome.question.query}")
    counts = Counter((o.question.kind, o.miss) for o in outcomes if o.miss)
    print(f"{'miss':>9} | " + " | ".join(f"{kind:>10}" for kind in KINDS) + " | all")
    for miss in MISSES:
        cells = " | ".join(f"{counts[kind, miss]:>10}" for kind in KINDS)
        print(f"{miss:>9} | {cells} | {sum(counts[kind, miss] for kind in KINDS)}")


def report(outcomes: list[Outcome], latencies: list[float], cpu: list[float]) -> None:
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = f"{'budget':>7} | " + " | ".join(f"{kind:>10}" for kind in KINDS) + " |  all"
    print("answer inside the doc_search text:")
    print(header)
    for budget in BUDGETS:
        cells = []
        for kind in KINDS:
            mine = [o for o in outcomes if o.question.kind == kind]
            cells.append(f"{sum(o.found[budget] for o in mine):>4}/{len(mine):<5}")
        total = sum(o.found[budget] for o in outcomes)
        print(f"{budget:>7} | " + " | ".join(f"{cell:>10}" for cell in cells) + f" | {total}/{len(outcomes)}")
    top3 = sum(1 for o in outcomes if o.rank is not None and o.rank <= 3)
    mrr = sum(1 / o.rank for o in outcomes if o.rank is not None) / len(outcomes)
    by_kind = ", ".join(
        f"{kind} {sum(1 for o in outcomes if o.question.kind == kind and o.rank is not None and o.rank <= 3)}"
        for kind in KINDS
    )
    print(f"right file in top 3: {top3}/{len(outcomes)} ({by_kind}); MRR@10 {mrr:.3f}")
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    print(
        f"doc_search at 1000 tokens: p50 {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms wall; "
        f"{statistics.mean(cpu) * 1000:.1f} ms CPU per search"
    )


def write(args: argparse.Namespace, outcomes: list[Outcome]) -> None:
    """What ``--json``, ``--texts`` and ``--show`` ask for."""
    if args.json:
        rows = [
            {
                "query": o.question.query,
                "kind": o.question.kind,
                "rank": o.rank,
                "found": {str(b): o.found[b] for b in BUDGETS},
                **({"miss": o.miss} if o.miss else {}),
            }
            for o in outcomes
        ]
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    if args.texts:  # for counting what the answers hold with a real tokenizer (stress/true_tokens.py)
        lines = (
            json.dumps({"query": o.question.query, "answer": o.question.answer, "budget": b, "text": o.texts[b]})
            for o in outcomes
            for b in BUDGETS
        )
        args.texts.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    if args.show:
        for o in outcomes:
            if o.question.kind == args.show and not o.found[1000]:
                print(
                    f"\n=== {o.question.query!r} ({o.question.file}; rank {o.rank}) wants {o.question.answer!r}\n{o.texts[1000]}"
                )
