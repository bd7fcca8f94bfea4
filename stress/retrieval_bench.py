"""Does the answer land inside the budget? doc_search over a real manual, 60 fixed questions.

Run as ``python stress/retrieval_bench.py`` from the repository root, after
``apt-get install postgresql-doc-15``. Every HTML page of
``/usr/share/doc/postgresql-doc-15/html`` (1,169 pages, 18 MB of HTML) is converted to
text by :mod:`stress.html_text` (6.9 MB of markdown-headed text), ingested by
``file_path`` into a fresh data dir through the real server (``open_context`` and the
official SDK's in-memory client, no LLM), then each question of
``stress/retrieval_questions.json`` (20 exact identifiers, 20 natural questions, 20
paraphrases; each names the file and a short answer string found verbatim in it; the
set was written before any tuning and is never edited) is asked of ``doc_search``.
The other sets, their corpora, how and when each was written, and which are held out
(never tune on those) are described in ``stress/retrieval_questions.py``, which reads them.
``stress/retrieval_sets.py`` runs every set and sums them.
Each runs with ``--sources DIR --questions FILE``:

    --sources /usr/share/doc/python3.11/html/_sources --questions stress/retrieval_questions_python.json
        (likewise _python2, _python3 and _python4.json, over the same sources)
    --sources /usr/share/doc/nodejs/api --questions stress/retrieval_questions_node.json
        (Debian's nodejs-doc is Node 18's: unzip its .md.gz and add --drop-missing)
    --sources /usr/share/doc/git-doc --questions stress/retrieval_questions_git.json
    --sources /usr/share/doc/python-pytest-doc/html/_sources --questions stress/retrieval_questions_pytest.json

``--chunk-tokens`` sets the server's chunk size (default 800, the server's own), to measure
the retrieval unit.

Each question is asked:

- once with ``budget_tokens=100000, limit=10``, for the ranking: the right file among
  the first 3 hits, and MRR@10 (1/rank of the first hit from the right file);
- once per budget (500, 1,000, 2,000 tokens; ``limit`` 10): is the answer inside the
  text returned? (whitespace runs compared as one space, case-insensitive.)

It prints the answer-in-text rate per kind and budget, top-3 and MRR@10, the search
latency p50/p95 at the 1,000-token budget (wall, in-process; and CPU ms per search),
and the ingest time (wall and this process's CPU; the chunking processes' CPU is added
at the end). ``--json FILE`` writes every question's outcome, ``--show KIND`` prints the
1,000-token answers of that kind's misses, ``--texts FILE`` writes every answer's text (one
JSON line per question and budget: ``stress/true_tokens.py`` counts them with real tokenizers).

Semantic recall: ``--real-embeddings`` serves all-MiniLM-L6-v2 with llama-cpp-python
(``stress/real_embeddings.py``) and runs with ``--embed-model`` on it (or name your own
with ``--embed-model``/``--embed-base-url``). Before the questions it waits until every
chunk is embedded and prints how long that took, the vectors, the process's peak RSS
and the store's files. ``--query-wait S`` replaces how long a search waits for its
query's vector (``store/vector_task.py`` QUERY_S) on a machine too loaded for 0.5 s; each
search that skipped semantic recall is counted. ``--files N`` keeps the questions'
files plus the first N others (sorted), for a run that embeds in minutes: compare it
with the same ``--files`` without embeddings. ``--max-file-parts N`` first drops the questions
whose file is longer than N embedding parts (``retrieval_questions.within_parts``): a model
embedding ~0.5 parts/s (nomic-embed-text-v1.5, all-mpnet-base-v2 here) finishes ``--files 0``
of python20 at ``--max-file-parts 59`` in about an hour, not four.

``--data DIR`` keeps the server's data dir in ``DIR`` (created if absent) instead of a
temporary one: a second run over the same files ingests only what changed
(``stress/bench_data.py``: the document service's own unchanged-file check, as ``ctxtrio
ingest`` asks it), so its vectors stay and semantic recall costs the questions, not the
16-27 minutes of embedding the whole python3.11-doc takes. It refuses to run, before any
ingest, when ``DIR`` holds documents this run does not ingest or this tree chunks an
unchanged file otherwise (another tree, another ``--chunk-tokens``): use one ``DIR`` per
chunking. With ``--real-embeddings`` the embedding requests sent before the first question
are counted (from the server's log).

``--rewrites FILE`` (JSON ``{question: words}``, e.g. what ``stress/query_rewrites.py`` had a local
model write for each question) searches each question with those words added, and still judges it
by the question's own file and answer; ``--rewrite-to meaning`` adds them only to semantic recall's
query (needs ``--embed-model``), the keyword side searching the question as it is.

``--classify`` says why each answer missing at 1,000 tokens is missing (the chunks holding
the answer are read from the store): *window* (a chunk holding it is shown, but not the
lines that hold it), *room* (such a chunk is among the first 10 hits but did not fit),
*adjacent* (the chunk next to one holding it is shown), *elsewhere* (other chunks of the
right file are shown), *not shown* (no chunk of the right file is).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_data import data_dir, plan, record, refusing
from bench_embed import SEARCH_SKIPPED, add_embed_arguments, caught_up, set_query_wait
from html_text import convert_dir
from query_rewrites import read_rewrites, restate_meaning
from real_embeddings import DEFAULT_VENV, MODEL_ALIAS, EmbedServer, ensure_gguf
from retrieval_questions import (
    HTML,
    KINDS,
    Question,
    doc_id_for,
    load_questions,
    missing_answers,
    normalized,
    within_parts,
)
from retrieval_report import BUDGETS, Outcome, classify, report, write

from ctxtrio._app import build_server
from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from testkit.results import text_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp.types import CallToolResult

    from ctxtrio._wiring import Wiring

HERE = Path(__file__).resolve().parent


def _text(result: CallToolResult) -> str:
    """The result's text; a tool error ends the run."""
    if result.is_error:
        raise SystemExit(f"tool error: {text_of(result)}")
    return text_of(result)


def _hits(result: CallToolResult) -> list[tuple[str, int]]:
    """The (doc_id, chunk index) of each hit, in order."""
    structured = result.structured_content or {}
    hits = structured.get("hits", [])
    assert isinstance(hits, list)
    return [(str(hit["doc_id"]), int(hit["index"])) for hit in hits if isinstance(hit, dict)]


async def ingest_all(client: Client, corpus: Path, files: list[Path], concurrency: int) -> None:
    limiter = trio.CapacityLimiter(concurrency)

    async def one(path: Path) -> None:
        doc_id = doc_id_for(str(path.relative_to(corpus)))
        async with limiter:
            result = await client.call_tool("doc_ingest", {"file_path": str(path), "doc_id": doc_id})
        _text(result)

    async with trio.open_nursery() as nursery:
        for path in files:
            nursery.start_soon(one, path)


async def ask(
    client: Client, question: Question, outcome: Outcome, latencies: list[float], cpu: list[float], query: str
) -> None:
    """Search ``query`` (the question's own, or it restated: ``--rewrites``); judge by the question's answer."""
    ranking = await client.call_tool("doc_search", {"query": query, "budget_tokens": 100_000, "limit": 10})
    _text(ranking)
    wanted = doc_id_for(question.file)
    outcome.ranked = _hits(ranking)
    docs = [doc_id for doc_id, _ in outcome.ranked]
    outcome.rank = docs.index(wanted) + 1 if wanted in docs else None
    answer = normalized(question.answer)
    for budget in BUDGETS:
        began, began_cpu = time.perf_counter(), time.process_time()
        result = await client.call_tool("doc_search", {"query": query, "budget_tokens": budget})
        if budget == 1000:
            latencies.append(time.perf_counter() - began)
            cpu.append(time.process_time() - began_cpu)
            outcome.shown = _hits(result)
        text = _text(result)
        outcome.skipped += SEARCH_SKIPPED in text
        outcome.texts[budget] = text
        outcome.found[budget] = answer in normalized(text)


def _chosen(
    args: argparse.Namespace, questions: list[Question], corpus: Path, files: list[Path]
) -> tuple[list[Question], list[Path]]:
    """The questions asked and the files ingested: ``--max-file-parts`` first, then ``--files`` keeps the
    files still asked about and that many others (sorted)."""
    if args.max_file_parts is not None:
        questions = within_parts(questions, corpus, args.max_file_parts)
    if args.files is not None:
        asked = {q.file for q in questions}
        named = {str(path.relative_to(corpus)): path for path in files}
        others = [path for name, path in sorted(named.items()) if name not in asked][: args.files]
        files = [path for name, path in named.items() if name in asked] + others
    return questions, files


async def run(args: argparse.Namespace, requests: Callable[[], int] | None = None) -> list[Outcome]:
    """Ingest, wait for the embeddings if any, ask; ``requests()`` counts the embedding requests so far."""
    questions = load_questions(args.questions)
    with refusing(), tempfile.TemporaryDirectory(prefix="retrieval-bench-") as tmp:
        if args.sources is not None:  # text as it is (reST, markdown): no conversion
            corpus = args.sources
            files = sorted(
                path for path in corpus.rglob("*") if path.is_file() and path.suffix in {".txt", ".rst", ".md"}
            )
        else:  # converted beside --data's server data, so a second run finds the same paths unchanged
            corpus = Path(tmp) / "corpus" if args.data is None else args.data / "corpus"
            files = convert_dir(args.html, corpus)
        questions, files = _chosen(args, questions, corpus, files)
        missing = missing_answers(questions, corpus)
        if missing and not args.drop_missing:
            raise SystemExit(f"answers not in their files: {missing}")
        if missing:  # another version of the manual (Debian's nodejs-doc is Node 18's)
            print(f"dropped {len(missing)} questions whose answer is not in their file: {missing}", flush=True)
            questions = [q for q in questions if q not in missing]
        mb = sum(path.stat().st_size for path in files) / 1e6
        data = Path(tmp) / "data" if args.data is None else data_dir(args.data)
        config = Config(
            data_dir=data,
            llm_enabled=False,
            audit=False,
            ingest_roots=[corpus],
            embed_model=args.embed_model or "",
            embed_base_url=args.embed_base_url or "",
            chunk_tokens=args.chunk_tokens,
            chunk_overlap_tokens=min(80, args.chunk_tokens // 10),
        )
        async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
            began, began_cpu = time.perf_counter(), time.process_time()
            todo = files if args.data is None else (await plan(ctx, args.data, corpus, files)).ingest
            await ingest_all(client, corpus, todo, args.concurrency)
            if args.data is not None:
                await record(ctx, args.data, corpus, todo)
            ingest_s, ingest_cpu = time.perf_counter() - began, time.process_time() - began_cpu
            kept = "" if args.data is None else f" ({len(todo)} ingested, {len(files) - len(todo)} unchanged kept)"
            print(
                f"ingest: {len(files)} files{kept}, {mb:.1f} MB in {ingest_s:.1f} s wall, "
                f"{ingest_cpu:.1f} s CPU in this process"
            )
            if ctx.documents.semantic is not None:
                await embedded(ctx, began, data, requests)
            outcomes = [Outcome(q) for q in questions]
            latencies: list[float] = []
            cpu: list[float] = []
            added = read_rewrites(args.rewrites)
            searched = {o.question.query: o.question.query for o in outcomes}
            if args.rewrite_to == "query":
                searched = {q: f"{q} {added[q]}" if added.get(q) else q for q in searched}
            elif added:
                restate_meaning(ctx.documents, added)
            for outcome in outcomes:
                await ask(client, outcome.question, outcome, latencies, cpu, searched[outcome.question.query])
            if args.classify:
                await classify(ctx, outcomes)
    skipped = sum(o.skipped for o in outcomes)
    if args.embed_model:
        print(f"searches that skipped semantic recall: {skipped} of {len(outcomes) * len(BUDGETS)}")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"chunking processes: {children.ru_utime + children.ru_stime:.1f} s CPU")
    report(outcomes, latencies, cpu)
    return outcomes


async def embedded(ctx: Wiring, began: float, data: Path, requests: Callable[[], int] | None = None) -> None:
    """Wait until every chunk is embedded (:func:`bench_embed.caught_up`: by a pass that began after the
    ingest); print how long since the ingest began, and what it holds."""
    semantic = ctx.documents.semantic
    assert semantic is not None
    await caught_up(semantic)
    status = semantic.status()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sent = "" if requests is None else f"; {requests()} embedding requests answered so far"
    print(
        f"fully embedded {time.perf_counter() - began:.0f} s after the ingest began: {status.chunks_embedded} chunks, "
        f"{status.vectors} vectors of {status.dimension} dims ({status.chunks_refused} refused); peak RSS "
        f"{rss_mb:.0f} MB; vectors file {(data / 'vectors.sqlite3').stat().st_size / 1e6:.1f} MB, index "
        f"{(data / 'index.sqlite3').stat().st_size / 1e6:.1f} MB{sent}"
    )


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--html", type=Path, default=HTML, help="the HTML pages (default: postgresql-doc-15's)")
    parser.add_argument("--questions", type=Path, default=HERE / "retrieval_questions.json")
    parser.add_argument(
        "--sources",
        type=Path,
        help="text files ingested as they are instead of --html (e.g. the Python docs' _sources)",
    )
    parser.add_argument("--concurrency", type=int, default=8, help="doc_ingest calls in flight")
    parser.add_argument("--chunk-tokens", type=int, default=800, help="the server's --chunk-tokens (its default 800)")
    parser.add_argument("--json", type=Path, help="write each question's outcome here")
    parser.add_argument("--texts", type=Path, help="write every answer's text, one JSON line per question and budget")
    parser.add_argument("--show", choices=KINDS, help="print the 1000-token answers of this kind's misses")
    parser.add_argument("--classify", action="store_true", help="say why each answer missing at 1000 tokens is")
    parser.add_argument("--drop-missing", action="store_true", help="leave out questions whose answer their file lacks")
    parser.add_argument("--files", type=int, help="keep the questions' files and this many others")
    parser.add_argument(
        "--max-file-parts",
        type=int,
        help="ask only the questions whose file is at most this many embedding parts long (with --files 0: "
        "a corpus a slow embedder finishes; python20 at 59: 34 questions, 33 files)",
    )
    add_embed_arguments(parser)
    parser.add_argument("--real-embeddings", action="store_true", help="serve all-MiniLM-L6-v2 (real_embeddings.py)")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the real-model venv, for --real-embeddings")
    parser.add_argument("--data", type=Path, help="keep the server's data dir here; the next run ingests what changed")
    parser.add_argument("--rewrites", type=Path, help="JSON {question: words added to it when searched}")
    parser.add_argument(
        "--rewrite-to",
        choices=("query", "meaning"),
        default="query",
        help="the added words go to the whole query, or only to semantic recall's (needs --embed-model)",
    )
    return parser


def main() -> int:
    args = arguments().parse_args()
    if args.sources is not None and not args.sources.is_dir():
        raise SystemExit(f"{args.sources} not found: apt-get install python3.11-doc")
    if args.sources is None and not args.html.is_dir():
        raise SystemExit(f"{args.html} not found: apt-get install postgresql-doc-15")
    set_query_wait(args.query_wait)
    if not args.real_embeddings:
        outcomes = trio.run(run, args)
    else:
        server = EmbedServer(args.venv, ensure_gguf(args.venv, args.venv.parent / "embed"))
        server.start()
        args.embed_model, args.embed_base_url = MODEL_ALIAS, server.base_url
        try:
            outcomes = trio.run(run, args, server.embedding_requests)
        finally:
            server.stop()
    write(args, outcomes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
