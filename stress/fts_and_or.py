"""What an all-words-first search would save: bare FTS5, OR against AND, on scale.py's corpus.

    python stress/fts_and_or.py                 # 2,000 documents of 100 KB, 60 queries
    python stress/fts_and_or.py --docs 500

``doc_search`` used to OR the query's terms and rank every match (before ``store.rows.fts_levels``), so at 10,000 documents
most of its time goes to ranking every row that holds any query word (see
``stress/scale.py``). This measures, outside ctxtrio, in an in-memory FTS5 table of the
same documents cut into 2,000-character rows, how many rows OR and AND match and how long
``ORDER BY bm25 LIMIT 10`` takes for each, and how often AND alone finds fewer than 10
(where an AND-then-OR search would pay for both). It decides nothing by itself: whether
a search may answer fewer hits because it asks for all words is a product question.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import time

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
from scale import Corpus

ROW_CHARS = 2000
LIMIT = 5  # as stress/scale.py asks doc_search


def build(docs: int) -> sqlite3.Connection:
    corpus = Corpus(100 * 1024)
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE chunks USING fts5(terms, journal UNINDEXED, item UNINDEXED)")
    with db:
        for number in range(docs):
            text = corpus.document(number)
            db.executemany(
                "INSERT INTO chunks VALUES (?, ?, ?)",
                ((text[at : at + ROW_CHARS], f"d{number}", str(at)) for at in range(0, len(text), ROW_CHARS)),
            )
    return db


def measure(db: sqlite3.Connection, queries: list[list[str]], joiner: str) -> None:
    latencies: list[float] = []
    matched: list[int] = []
    short = 0
    for words in queries:
        expression = joiner.join(f'"{word}"' for word in words)
        began = time.perf_counter()
        hits = db.execute(
            "SELECT journal, item, bm25(chunks) FROM chunks WHERE chunks MATCH ? ORDER BY bm25(chunks) LIMIT ?",
            (expression, LIMIT),
        ).fetchall()
        latencies.append((time.perf_counter() - began) * 1000)
        short += len(hits) < LIMIT
        matched.append(db.execute("SELECT count(*) FROM chunks WHERE chunks MATCH ?", (expression,)).fetchone()[0])
    ordered = sorted(latencies)
    print(
        f"{joiner.strip():>3}: p50 {statistics.median(latencies):.2f} ms, p99 {ordered[max(0, round(len(ordered) * 0.99) - 1)]:.2f} ms;"
        f" matched rows median {statistics.median(matched):,.0f}; fewer than {LIMIT} hits in {short} of {len(queries)} queries"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    began = time.perf_counter()
    db = build(args.docs)
    rows = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    print(
        f"{args.docs:,} documents, {rows:,} rows of {ROW_CHARS} characters, built in {time.perf_counter() - began:.1f} s"
    )
    rng = random.Random(3)
    words = Corpus(100 * 1024).words
    queries = [rng.sample(words, rng.choice([2, 3])) for _ in range(args.queries)]
    measure(db, queries, " OR ")
    measure(db, queries, " AND ")


if __name__ == "__main__":
    main()
