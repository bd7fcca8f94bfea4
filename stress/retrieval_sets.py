"""Every committed question set of ``stress/retrieval_bench.py`` in one run, one line a set and their sum.

Run as ``python stress/retrieval_sets.py`` from the repository root, after ``apt-get install
postgresql-doc-15 python3.11-doc nodejs-doc git-doc python-pytest-doc``. A search change is
judged on the sum over the dev sets (:data:`DEV`: PostgreSQL, Node, python … python23); git and
pytest (:data:`CHECKS`, ``--checks``) are held-out checks: report their totals, never tune on them.
Each set runs ``retrieval_bench.py --classify --json`` in a process of its own, keeping its
data dir under ``--data`` (one per corpus: a second run ingests only what changed, so a tree
that chunks as this one did costs the questions only; use another ``--data`` for a tree that
chunks otherwise, which ``retrieval_bench.py`` refuses to mix). The JSON and log of each set go to
``--out``, so two runs compare question by question. Answers are deterministic (keyword search,
token estimates); latencies are not, so none is summed.

Debian's ``nodejs-doc`` ships its Markdown gzipped: ``--node DIR`` names a folder holding them
unzipped (``for f in /usr/share/doc/nodejs/api/*.md.gz; do gunzip -c "$f" > DIR/$(basename
"${f%.gz}"); done``); the set runs with ``--drop-missing`` (Node 18's pages lack 2 answers).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

HERE: Final = Path(__file__).resolve().parent
PYTHON_DOCS: Final = Path("/usr/share/doc/python3.11/html/_sources")
BUDGETS: Final = ("500", "1000", "2000")


@dataclass(frozen=True, slots=True)
class QuestionSet:
    name: str
    questions: str  # file name in stress/
    corpus: str  # data dir name under --data: sets over one corpus share it
    sources: Path | None  # None: retrieval_bench's default (PostgreSQL's HTML)


def _python(n: str) -> QuestionSet:
    return QuestionSet(f"python{n}", f"retrieval_questions_python{n}.json", "python", PYTHON_DOCS)


DEV: Final = (
    QuestionSet("pg", "retrieval_questions.json", "pg", None),
    QuestionSet("node", "retrieval_questions_node.json", "node", Path("/usr/share/doc/nodejs/api")),
    *(_python(n) for n in ("", *map(str, range(2, 24)))),  # python, python2 … python23
)
CHECKS: Final = (
    QuestionSet("git", "retrieval_questions_git.json", "git", Path("/usr/share/doc/git-doc")),
    QuestionSet(
        "pytest", "retrieval_questions_pytest.json", "pytest", Path("/usr/share/doc/python-pytest-doc/html/_sources")
    ),
)


@dataclass(frozen=True, slots=True)
class Totals:
    questions: int
    found: tuple[int, int, int]  # answers inside 500 / 1,000 / 2,000 tokens
    top3: int  # right file among the first 3 hits


def totals(outcomes: list[dict[str, Any]]) -> Totals:
    """Sums of ``retrieval_bench.py --json``'s outcomes (``rank`` None: the right file not among the first 10)."""
    inside = [sum(bool(o["found"][budget]) for o in outcomes) for budget in BUDGETS]
    top3 = sum(1 for o in outcomes if o["rank"] is not None and o["rank"] <= 3)
    return Totals(len(outcomes), (inside[0], inside[1], inside[2]), top3)


def run_set(qs: QuestionSet, *, data: Path, out: Path, node: Path | None) -> Totals:
    """One set through ``retrieval_bench.py`` in its own process; its log and JSON go to ``out``."""
    command = [sys.executable, str(HERE / "retrieval_bench.py"), "--questions", str(HERE / qs.questions), "--classify"]
    sources = node if qs.name == "node" and node is not None else qs.sources
    if sources is not None:
        command += ["--sources", str(sources)]
    if qs.name == "node":
        command.append("--drop-missing")
    result_json = out / f"{qs.name}.json"
    command += ["--data", str(data / qs.corpus), "--json", str(result_json)]
    with (out / f"{qs.name}.log").open("w") as log:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{qs.name}: retrieval_bench.py exited {done.returncode}; see {out / qs.name}.log")
    return totals(json.loads(result_json.read_text()))


def line(name: str, t: Totals) -> str:
    return f"{name:9} {t.found[0]:4} / {t.found[1]:4} / {t.found[2]:4} of {t.questions:3}   top 3 {t.top3}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="data dirs, one per corpus (kept between runs)")
    parser.add_argument("--out", type=Path, required=True, help="each set's log and JSON")
    parser.add_argument("--node", type=Path, help="a folder of Node's API .md files (nodejs-doc's, unzipped)")
    parser.add_argument("--checks", action="store_true", help="run the held-out checks (git, pytest) instead")
    parser.add_argument("--only", nargs="+", metavar="SET", help="these sets only (pg, node, python, python2, ...)")
    args = parser.parse_args()
    chosen = CHECKS if args.checks else DEV
    if args.only:
        chosen = tuple(qs for qs in (*DEV, *CHECKS) if qs.name in args.only)
    args.out.mkdir(parents=True, exist_ok=True)
    print("set        500 / 1000 / 2000 answers inside", flush=True)
    summed = Totals(0, (0, 0, 0), 0)
    for qs in chosen:
        t = run_set(qs, data=args.data, out=args.out, node=args.node)
        print(line(qs.name, t), flush=True)
        found = tuple(a + b for a, b in zip(summed.found, t.found, strict=True))
        summed = Totals(summed.questions + t.questions, (found[0], found[1], found[2]), summed.top3 + t.top3)
    print(line("sum", summed))


if __name__ == "__main__":
    main()
