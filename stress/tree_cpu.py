"""CPU seconds per MB of ingesting stress/code_questions.py's source trees: this tree against another, ABBA.

    python stress/tree_cpu.py --against /tmp/base go rust             # chunking alone
    python stress/tree_cpu.py --against /tmp/base --cli --rounds 2 go  # the whole CLI ingest

``--against DIR`` is another checkout (``git worktree add --detach DIR main``). Wall MB/s moves
with the machine's load; CPU time much less, and alternating the trees (A B B A per round)
spreads what load remains over both. Each run is a fresh process with ``PYTHONPATH`` set to
its tree:

* chunking alone (default): :func:`ctxtrio.text.chunking.iter_chunks` of every file ctxtrio
  ingest stores from the language's tree, of the kind its name says, cold model, 800/80;
  CPU of that loop only (``time.process_time``), per MB of text;
* ``--cli``: ``python -m ctxtrio ingest TREE... --no-llm --json`` into a fresh data dir,
  CPU (user + system) of that process and the children it reaped, per MB of text stored.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
from code_questions import TREES
from real_text import JDK

ROOT = Path(__file__).resolve().parents[1]
STRESS = Path(__file__).resolve().parent
_CHUNKING = f"""
import sys, time
sys.path.insert(0, {str(STRESS)!r})
import real_text
from ctxtrio.text.chunking import iter_chunks
from ctxtrio.text.kinds import kind_for
from ctxtrio.text.tokens import TokenModel
docs = real_text.code_trees([sys.argv[1]])
kinds = [kind_for(doc.text, doc.name) for doc in docs]
model = TokenModel.cold()
started = time.process_time()
for doc, kind in zip(docs, kinds):
    for _ in iter_chunks(doc.text, chunk_tokens=800, overlap_tokens=80, model=model, kind=kind):
        pass
print((time.process_time() - started) / real_text.megabytes(docs))
"""


def chunking(tree: Path, language: str) -> float:
    """CPU-s per MB of chunking ``language``'s tree with ``tree``'s ctxtrio."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", _CHUNKING, language],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout)


def cli(tree: Path, language: str) -> float:
    """CPU-s per MB of ``python -m ctxtrio ingest`` of ``language``'s tree, run from ``tree``."""
    paths = [path.format(jdk=JDK) for path in TREES[language]]
    with tempfile.TemporaryDirectory(prefix="tree-cpu-") as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [sys.executable, "-m", "ctxtrio", "ingest", *paths, "--data-dir", f"{tmp}/data", "--no-llm", "--json"],
            cwd=tree, capture_output=True, text=True, check=True,
        )  # fmt: skip
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    megabytes = sum(Path(one["path"]).stat().st_size for one in json.loads(done.stdout)["ingested"]) / 1e6
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / megabytes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("languages", nargs="+", choices=sorted(TREES))
    parser.add_argument("--against", type=Path, required=True, help="the other checkout (A; this tree is B)")
    parser.add_argument("--cli", action="store_true", help="the whole CLI ingest instead of chunking alone")
    parser.add_argument("--rounds", type=int, default=2, help="ABBA rounds")
    args = parser.parse_args()
    measure = cli if args.cli else chunking
    for language in args.languages:
        spent: dict[str, list[float]] = {"A": [], "B": []}
        for _ in range(args.rounds):
            for label in "ABBA":
                spent[label].append(measure(args.against if label == "A" else ROOT, language))
        for label, tree in (("A", args.against), ("B", ROOT)):
            runs = " ".join(f"{value:.4f}" for value in spent[label])
            print(f"{language:7} {label} {statistics.mean(spent[label]):.4f} CPU-s/MB (runs {runs})  {tree}")
        print(
            f"{language:7} B/A {statistics.mean(spent['B']) / statistics.mean(spent['A']):.3f}; load {os.getloadavg()[0]:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
