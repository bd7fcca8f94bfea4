"""doc_search latency by query length, against plain OR ranking of the same words.

    python stress/search_words.py --data-dir /tmp/scale-store --docs 10000   # builds it once (~4 min)
    python stress/search_words.py --data-dir /tmp/scale-store --docs 1000 --queries 20

Builds (or reuses) a store of ``--docs`` of ``stress/scale.py``'s documents through the
library (``open_context``; 8 ingests at a time), then for each query length (a marker
word, then 2 to 16 random vocabulary words, then 64) times ``--queries`` calls of
``DocumentService.search`` (limit 10, budget 2,000: the search, the chunk reads and the
packing, no transport), and, for comparison, the single FTS5 statement that the search
made before levels: ``ORDER BY bm25() LIMIT`` over the OR of the same words (at most
:data:`~ctxtrio._limits.SEARCH_WORDS` of them), on a read-only connection. Prints p50 and
p90 of both, and how many levels the search may ask for (``store.rows.fts_levels``).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from scale import Corpus

from ctxtrio._app import open_context
from ctxtrio._config import Config
from ctxtrio._limits import SEARCH_WORDS
from ctxtrio.docs.search import search_words
from ctxtrio.store.rows import fts_levels

LENGTHS = (1, 2, 3, 4, 6, 8, 16, 64)


async def build(config: Config, corpus: Corpus, docs: int) -> None:
    async with open_context(config) as ctx:
        if await ctx.documents.list_documents():
            return  # a store built before (its size is what --docs said then)
        numbers = iter(range(docs))
        started = time.perf_counter()

        async def worker() -> None:
            for number in numbers:
                await ctx.documents.ingest(text=corpus.document(number), doc_id=f"doc-{number:06d}")

        async with trio.open_nursery() as nursery:
            for _ in range(8):
                nursery.start_soon(worker)
        print(f"built {docs} documents in {time.perf_counter() - started:.0f} s", flush=True)


def queries(corpus: Corpus, docs: int, words: int, count: int) -> list[str]:
    rng = random.Random(words)
    if words == 1:
        return [corpus.marker(rng.randrange(docs)) for _ in range(count)]
    return [" ".join(rng.sample(corpus.words, words)) for _ in range(count)]


def plain_or_ms(index: Path, terms: list[str]) -> float:
    expression = fts_levels(terms)[-1].expression
    with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as conn:
        started = time.perf_counter()
        conn.execute(
            "SELECT journal, item, bm25(chunks) FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT 19",
            (expression,),
        ).fetchall()
        return (time.perf_counter() - started) * 1000


async def measure(config: Config, corpus: Corpus, docs: int, count: int) -> None:
    index = config.data_dir / "index.sqlite3"
    async with open_context(config) as ctx:
        await ctx.documents.search("warm up", budget_tokens=2000, limit=10)
        print(f"{'words':>5} {'levels':>7} {'search p50 ms':>14} {'p90':>8} {'plain OR p50 ms':>16} {'p90':>8}")
        for words in LENGTHS:
            latencies: list[float] = []
            plain: list[float] = []
            asked: list[int] = []
            for query in queries(corpus, docs, words, count):
                started = time.perf_counter()
                await ctx.documents.search(query, budget_tokens=2000, limit=10)
                latencies.append((time.perf_counter() - started) * 1000)
                terms, _ = search_words(query)
                plain.append(plain_or_ms(index, terms))
                asked.append(len(fts_levels(terms)))
            latencies.sort()
            plain.sort()
            p90 = int(len(latencies) * 0.9)
            print(
                f"{words:>5} {statistics.median(asked):>7.0f} {statistics.median(latencies):>14.2f} {latencies[p90]:>8.2f} "
                f"{statistics.median(plain):>16.2f} {plain[p90]:>8.2f}",
                flush=True,
            )
    print(
        f"(levels: how many the search may ask; it stops at the first that fills the limit. Words past {SEARCH_WORDS} are not searched.)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the store to build or reuse")
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=30, help="per query length")
    args = parser.parse_args()
    config = Config(data_dir=args.data_dir, llm_enabled=False, audit=False)
    corpus = Corpus(100 * 1024)
    trio.run(build, config, corpus, args.docs)
    trio.run(measure, config, corpus, args.docs, args.queries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
