"""Why a search shows the chunk it shows: every candidate's scores, beside the chunks that hold the answer.

Run from the repository root, with the corpus and questions of ``stress/retrieval_bench.py``::

    python stress/chunk_scores.py --sources /usr/share/doc/python3.11/html/_sources \
        --questions stress/retrieval_questions_python.json --match 'wildcard'

The corpus is ingested into a fresh data dir in process (no MCP client). For each question
whose query holds ``--match`` (all with none; ``--misses`` only those whose answer is not in
the 1,000-token answer), it prints the candidates a keyword search re-ranks, each with its BM25,
its best passage's score, the share of the query's words its headings hold, and the sum
:func:`ctxtrio.docs.ranking.rerank` orders by (each relative to the best candidate's); then the
chunks of the question's file that hold the answer, with their BM25 for the same query (the
index asked for that file alone), passage score, and place in the index's own order (its
levels, to the 120th row; :func:`ctxtrio.docs.search.pool` re-ranks a found document's rows to
the 16th). ``*`` marks a chunk holding the answer, ``=`` another chunk of the question's file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from html_text import convert_dir
from retrieval_questions import HTML, Question, doc_id_for, load_questions, normalized

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.docs.packing import Candidate, tokens_per_char
from ctxtrio.docs.ranking import PASSAGE_TOKENS, _heading_share
from ctxtrio.docs.search import find_candidates, search_words
from ctxtrio.docs.searching import _counts_of
from ctxtrio.docs.service import DocumentService, repository_of
from ctxtrio.text.passages import passage_score

HERE = Path(__file__).resolve().parent


async def explain(documents: DocumentService, question: Question, *, misses: bool) -> None:
    repo = repository_of(documents)
    wanted = doc_id_for(question.file)
    answer = normalized(question.answer)
    result = await documents.search(question.query, budget_tokens=1000)
    inside = answer in normalized(result.rendered)
    if misses and inside:
        return
    query_terms, _ = search_words(question.query)
    rows, counts = await _counts_of(repo, query_terms)
    by_journal = repo.current_journals()
    found = await find_candidates(
        repo, query_terms, by_journal, 10, all_docs=True, query=question.query, counts=counts, rows=rows
    )
    shown = [(hit.doc_id, hit.index) for hit in result.hits]
    print(f"\n=== [{question.kind}] {question.query}  ({'inside' if inside else 'MISS'}; terms {query_terms})")
    print(f"    file {wanted}; shown at 1000: {shown}")
    _, doc = await repo.load(wanted)
    holding = [chunk for chunk in doc.chunks if answer in normalized(chunk.text)]
    entry = repo.entry(wanted)
    own = [
        Candidate(wanted, entry.info.title, chunk, 0.0)
        for chunk in doc.chunks
        if chunk.index in {c.index for c in holding}
    ]
    scored = await repo.store.search("chunks", query_terms, journals=[repo.journal(entry)], limit=200)
    bm25 = {int(hit.item): hit.score for hit in scored}
    _table(list(found.candidates), query_terms, wanted, {c.index for c in holding}, "candidates")
    print("  answer chunks (BM25 in their file):")
    for candidate in own:
        chunk = candidate.chunk
        passage = passage_score(chunk.text, query_terms, PASSAGE_TOKENS, tokens_per_char(chunk))
        heading = _heading_share(candidate, query_terms)
        print(
            f"    #{chunk.index:<4} bm25 {bm25.get(chunk.index, 0.0):6.2f} passage {passage:5.2f} head {heading:4.2f}"
            f" tokens {chunk.tokens:4d} trail {' > '.join(chunk.trail)[-90:]}"
        )
    common = frozenset(term for term, held in counts.items() if 2 * held >= rows > 0)
    deep = await repo.store.search("chunks", query_terms, journals=None, limit=120, common=common)
    places = {(hit.journal, int(hit.item)): n for n, hit in enumerate(deep)}
    journal = repo.journal(entry)
    print(
        f"  answer chunks' places in the index's order (of {len(deep)}): "
        f"{[(c.index, places.get((journal, c.index))) for c in holding]}; the file's: "
        f"{sorted((n, item) for (j, item), n in places.items() if j == journal)[:8]}"
    )
    near = sorted(bm25.items(), key=lambda kv: -kv[1])[:6]
    print(f"  file's best BM25: {[(i, round(s, 2)) for i, s in near]}")


def _table(candidates: list[Candidate], query_terms: list[str], wanted: str, holding: set[int], title: str) -> None:
    passages = [passage_score(c.chunk.text, query_terms, PASSAGE_TOKENS, tokens_per_char(c.chunk)) for c in candidates]
    top_bm25 = max((c.score for c in candidates), default=1.0) or 1.0
    top_passage = max(passages, default=1.0) or 1.0
    heads = [_heading_share(c, query_terms) for c in candidates]
    totals = [c.score / top_bm25 + p / top_passage + h for c, p, h in zip(candidates, passages, heads, strict=True)]
    order = sorted(range(len(candidates)), key=lambda n: (-totals[n], n))
    print(f"  {title} (bm25 order; rerank place):")
    for n, c in enumerate(candidates):
        mark = "*" if c.doc_id == wanted and c.chunk.index in holding else "=" if c.doc_id == wanted else " "
        print(
            f"   {mark}{n:2d} r{order.index(n):<2d} {c.doc_id[:28]:<28} #{c.chunk.index:<4} bm25 {c.score:6.2f}"
            f" passage {passages[n]:5.2f} head {heads[n]:4.2f} sum {totals[n]:4.2f} tok {c.chunk.tokens:4d}"
            f" | {' > '.join(c.chunk.trail)[-60:]}"
        )


async def main(args: argparse.Namespace) -> None:
    questions = load_questions(args.questions)
    if args.match:
        questions = [q for q in questions if args.match.casefold() in q.query.casefold()]
    if args.kind:
        questions = [q for q in questions if q.kind == args.kind]
    with tempfile.TemporaryDirectory(prefix="chunk-scores-") as tmp:
        if args.sources is not None:
            corpus = args.sources
            files = sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix in {".txt", ".rst", ".md"})
        else:
            corpus = Path(tmp) / "corpus"
            files = convert_dir(HTML, corpus)
        questions = [q for q in questions if answer_in(corpus / q.file, q)]
        config = Config(data_dir=Path(tmp) / "data", llm_enabled=False, audit=False, ingest_roots=[corpus])
        async with open_wiring(config) as ctx:
            documents = ctx.documents
            limiter = trio.CapacityLimiter(4)

            async def one(path: Path) -> None:
                async with limiter:
                    await documents.ingest(file_path=str(path), doc_id=doc_id_for(str(path.relative_to(corpus))))

            async with trio.open_nursery() as nursery:
                for path in files:
                    nursery.start_soon(one, path)
            for question in questions:
                await explain(documents, question, misses=args.misses)


def answer_in(path: Path, question: Question) -> bool:
    return normalized(question.answer) in normalized(path.read_text(encoding="utf-8"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=HERE / "retrieval_questions.json")
    parser.add_argument("--sources", type=Path, default=None)
    parser.add_argument("--match", default="")
    parser.add_argument("--misses", action="store_true")
    parser.add_argument("--kind", default="")
    trio.run(main, parser.parse_args())
