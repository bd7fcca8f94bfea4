"""Why a question's answer is missing: per miss, what the search looked for and where the answer ranks.

Run from the repository root over a data dir ``retrieval_bench.py --data DIR`` kept (``/work/bench/kk.sh``
keeps them in ``/tmp/kk-data/TREE/<set>``), with the run's ``--json`` to know which answers it missed:

    python stress/miss_causes.py --data /tmp/kk-data/base20/py --questions stress/retrieval_questions_python15.json \\
        --outcomes /tmp/kk/base20/python15.json --kind natural

For each question of ``--kind`` whose answer was not inside the 1,000-token answer it prints the terms
the search used (:func:`~ctxtrio.docs.search.search_words`: question words left out), the first place of
the right document and of a chunk holding the answer in a search of 10 and of 50 (deeper rows join the
re-ranking of a search of 50, so an answer chunk found there only was outside the first search's pool),
and the terms the answer chunk lacks (its text and heading trail). Sorting misses by these tells the
causes apart: the answer chunk lacking a word of the question the manual says otherwise (vocabulary), lacking
only words that frame the question ("make", "put", "in Python"), or holding every term yet ranked below
chunks that repeat them. Reads the data dir only (searches append nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval_questions import KINDS, doc_id_for, load_questions, normalized

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.docs.search import search_words
from ctxtrio.docs.service import repository_of
from ctxtrio.text.terms import terms

#: How deep the second search looks (the tool's largest ``limit``).
DEEP = 50


def _place(hits: list[tuple[str, int]], doc_id: str, holding: set[int] | None = None) -> str:
    """The 1-based place of the first hit of ``doc_id`` (of a chunk in ``holding`` when given), or '-'."""
    for n, (found, index) in enumerate(hits, 1):
        if found == doc_id and (holding is None or index in holding):
            return str(n)
    return "-"


def _missed(path: Path | None) -> set[str] | None:
    """The queries whose answer the run of ``path`` (retrieval_bench's ``--json``) missed at 1,000 tokens."""
    if path is None:
        return None
    outcomes = json.loads(path.read_text(encoding="utf-8"))
    return {str(o["query"]) for o in outcomes if not o["found"]["1000"]}


async def main(args: argparse.Namespace) -> None:
    missed = _missed(args.outcomes)
    config = Config(data_dir=args.data / "data", llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx:
        service = ctx.documents
        repo = repository_of(service)
        await repo.refresh()
        for question in load_questions(args.questions):
            if question.kind != args.kind or (missed is not None and question.query not in missed):
                continue
            wanted = doc_id_for(question.file)
            _, doc = await repo.load(wanted)
            answer = normalized(question.answer)
            holding = {chunk.index for chunk in doc.chunks if answer in normalized(chunk.text)}
            used, _ = search_words(question.query)
            places = []
            for limit in (10, DEEP):
                result = await service.search(question.query, budget_tokens=100_000, limit=limit)
                hits = [(hit.doc_id, hit.index) for hit in result.hits]
                places.append(f"{limit}: file {_place(hits, wanted)}, answer {_place(hits, wanted, holding)}")
            first = min(holding, default=None)
            held = (
                set()
                if first is None
                else set(terms(doc.chunks[first].text + "\n" + "\n".join(doc.chunks[first].trail)))
            )
            lacks = [term for term in used if term not in held]
            print(f"{question.query}\n  {wanted} #{sorted(holding)}; search of {'; '.join(places)}")
            print(f"  terms {used}; the answer chunk lacks {lacks}")


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="retrieval_bench's --data DIR")
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--outcomes", type=Path, help="retrieval_bench's --json of a run: only its misses at 1,000")
    parser.add_argument("--kind", choices=KINDS, default="natural")
    return parser


if __name__ == "__main__":
    trio.run(main, arguments().parse_args())
