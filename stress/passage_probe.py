"""Which embedding model picks the passage holding the answer out of its own file's neighbouring passages?

A small probe, not the retrieval benchmark: ``retrieval_bench.py`` embeds every part of a
set's ~57 files (~9,300 parts), 15-80 minutes a model on this shared machine. This one
asks each model only what issue 20 calls "found, not shown": with the right file found,
which of its passages does the question's vector sit nearest? For each question of a set,
the question's file is cut into parts as ctxtrio cuts a chunk (``text.embedding.text_parts``,
at most 520 characters, no heading trail), the first part holding the answer (whitespace
runs as one space, case-insensitive, as the bench compares) and its ``--width`` nearest
parts by position on each side form the pool, and each model ranks the pool by cosine.
It prints, per model and kind: answer part first (hit@1), among the first 3, and MRR.
Every model reads the same pools; questions whose answer no single part holds (it spans
a cut) are counted and left out.

Each model is one ``stress/embed_cache.py`` endpoint (``NAME=URL``, NAME as ctxtrio names
the model, so its prefixes go as ctxtrio sends them: ``llm/embeddings.prefixes_for``)::

    python stress/passage_probe.py --questions stress/retrieval_questions_python18.json \\
        all-minilm-l6-v2=http://127.0.0.1:8934/v1 all-mpnet-base-v2=http://127.0.0.1:8933/v1 \\
        nomic-embed-text-v1.5=http://127.0.0.1:8935/v1
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio)
import httpx
import numpy as np

from ctxtrio.llm.embeddings import prefixes_for
from ctxtrio.text.embedding import text_parts

SOURCES = Path("/usr/share/doc/python3.11/html/_sources")
KINDS = ("exact", "natural", "paraphrase")


def squashed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def pools(
    questions: list[dict[str, str]], sources: Path, width: int
) -> tuple[list[tuple[dict[str, str], list[str], set[int]]], int]:
    """Each question with its pool of part texts and which of them hold the answer; and how many were left out."""
    made, spanning = [], 0
    for question in questions:
        parts = [part.text for part in text_parts((sources / question["file"]).read_text(encoding="utf-8"))]
        holding = [n for n, text in enumerate(parts) if squashed(question["answer"]) in squashed(text)]
        if not holding:
            spanning += 1
            continue
        low, high = max(0, holding[0] - width), min(len(parts), holding[0] + width + 1)
        pool = parts[low:high]
        made.append((question, pool, {n - low for n in holding if low <= n < high}))
    return made, spanning


def embed(url: str, model: str, texts: list[str], step: int = 32) -> np.ndarray:
    rows: list[list[float]] = []
    with httpx.Client(timeout=3600) as client:
        for at in range(0, len(texts), step):
            answer = client.post(f"{url}/embeddings", json={"model": model, "input": texts[at : at + step]})
            answer.raise_for_status()
            rows += [row["embedding"] for row in sorted(answer.json()["data"], key=lambda row: row["index"])]
    matrix = np.asarray(rows, dtype=np.float32)
    unit: np.ndarray = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return unit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--sources", type=Path, default=SOURCES)
    parser.add_argument("--width", type=int, default=7, help="parts on each side of the answer's (pool of 2*W+1)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="the kinds of question asked (comma-separated)")
    parser.add_argument("--json", type=Path, help="write each question's rank per model")
    parser.add_argument("models", nargs="+", help="NAME=URL of an OpenAI-compatible embeddings endpoint")
    args = parser.parse_args()
    kinds = set(args.kinds.split(","))
    questions = [q for q in json.loads(args.questions.read_text())["questions"] if q["kind"] in kinds]
    made, spanning = pools(questions, args.sources, args.width)
    sizes = [len(pool) for _q, pool, _h in made]
    print(
        f"{len(made)} questions, pools of {min(sizes)}-{max(sizes)} parts ({sum(sizes)} in all); {spanning} left out (answer spans a cut)"
    )
    ranks: dict[str, list[int]] = {}
    for given in args.models:
        name, url = given.split("=", 1)
        prefixes = prefixes_for(name)
        texts = [prefixes.document + text for _q, pool, _h in made for text in pool]
        queries = [prefixes.query + question["query"] for question, _p, _h in made]
        vectors, asked = embed(url, name, texts), embed(url, name, queries)
        at, found = 0, []
        for (_question, pool, holding), query in zip(made, asked, strict=True):
            scores = vectors[at : at + len(pool)] @ query
            at += len(pool)
            order = list(np.argsort(-scores, kind="stable"))
            found.append(min(order.index(n) for n in holding) + 1)
        ranks[name] = found
        by_kind: dict[str, list[int]] = defaultdict(list)
        for (question, _p, _h), rank in zip(made, found, strict=True):
            by_kind[question["kind"]].append(rank)
        cells = [
            f"{kind} {sum(r == 1 for r in by_kind[kind])}/{sum(r <= 3 for r in by_kind[kind])}/{np.mean([1 / r for r in by_kind[kind]]):.3f}"
            for kind in KINDS
            if by_kind[kind]
        ]
        print(
            f"{name:24} first {sum(r == 1 for r in found):3} top3 {sum(r <= 3 for r in found):3} "
            f"MRR {np.mean([1 / r for r in found]):.3f} | " + "  ".join(cells),
            flush=True,
        )
    if args.json:
        rows = [
            {"query": q["query"], "kind": q["kind"], "pool": len(p), **{m: ranks[m][n] for m in ranks}}
            for n, (q, p, _h) in enumerate(made)
        ]
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
