"""Searches by meaning while the background embedder backfills: how many go without meaning, and the backfill's pace.

``python stress/query_first.py [--venv V] [--mb 1] [--seconds 120] [--every 1.0] [--port P]``

Starts ``stress/real_embeddings.EmbedServer`` (all-MiniLM-L6-v2 on llama-cpp-python, 1 thread: it
answers one request at a time), opens ctxtrio with ``--embed-model`` pointed at it (the real wiring:
``_app.py`` starts the background embedder), ingests python3.11-doc's reST sources (sorted, up to
``--mb``), then for ``--seconds`` one searcher calls ``documents.search`` every ``--every`` seconds
with a question never asked before (no query vector is cached), while the backfill goes on. Prints
the share of searches without meaning (a query vector not within QUERY_S = 0.5 s), search p50/p95,
and the chunks embedded per second over the same time (from ``semantic.status()``).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_corpus import backlog, backlog_parser
from real_embeddings import MODEL_ALIAS, EmbedServer, one_thread_server
from team_http import QUERIES

from ctxtrio._app import open_context
from ctxtrio._config import Config


async def run(server: EmbedServer, data: Path, files: list[tuple[str, str]], seconds: float, every: float) -> None:
    config = Config(
        data_dir=data, llm_enabled=False, audit=False, embed_model=MODEL_ALIAS, embed_base_url=server.base_url
    )
    async with open_context(config) as ctx:
        for title, text in files:
            await ctx.documents.ingest(text=text, title=title)
        semantic = ctx.documents.semantic
        assert semantic is not None
        while semantic.status().chunks_embedded == 0:  # the first answer: the backfill is under way
            await trio.sleep(0.2)
        first = semantic.status()
        began = time.perf_counter()
        latencies: list[float] = []
        without: list[str] = []
        number = 0
        while time.perf_counter() - began < seconds:
            question = f"{QUERIES[number % len(QUERIES)]} (case {number})"
            number += 1
            started = time.perf_counter()
            result = await ctx.documents.search(question, budget_tokens=1500)
            latencies.append((time.perf_counter() - started) * 1000)
            if result.semantic_skipped:
                without.append(result.semantic_skipped)
            await trio.sleep(every)
        last = semantic.status()
        elapsed = time.perf_counter() - began
    rate = (last.chunks_embedded - first.chunks_embedded) / elapsed
    p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) > 1 else latencies[0]
    print(f"searches: {len(latencies)}, without meaning {len(without)} ({100 * len(without) / len(latencies):.0f}%)")
    print(f"search p50 {statistics.median(latencies):.0f} ms, p95 {p95:.0f} ms")
    print(f"backfill: {last.chunks_embedded - first.chunks_embedded} chunks in {elapsed:.0f} s, {rate:.2f} chunks/s")
    print(f"({last.chunks_embedded} of {last.chunks_total} embedded; load {os.getloadavg()[0]:.1f})")


def main() -> int:
    parser = backlog_parser(__doc__, 1.0)
    parser.add_argument("--seconds", type=float, default=120.0, help="how long the searcher searches")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between searches")
    args = parser.parse_args()
    files = backlog(args.mb)
    with one_thread_server(args.venv, args.port) as server, tempfile.TemporaryDirectory() as tmp:
        trio.run(run, server, Path(tmp) / "data", files, args.seconds, args.every)
    return 0


if __name__ == "__main__":
    sys.exit(main())
