"""Growth curves: how ingest, search and memory change as the store grows.

    python stress/scale.py                         # 10, 100, 1,000, 10,000 documents of 100 KB
    python stress/scale.py --docs 10 100 1000      # chosen sizes
    python stress/scale.py --no-sessions           # documents only
    python stress/scale.py --docs 1000 10000 20000 --kb 2 --files --no-sessions   # files in folders

One server (``python -m ctxtrio --http``, see ``harness``) on a fresh data dir. The store
grows step by step to each size in ``--docs``: the documents added in a step are
ingested by ``--clients`` concurrent SDK clients (markdown built from a fixed set of
paragraphs, each with a unique marker word), then ``--searches`` sequential
``doc_search`` calls of 2-3 vocabulary words, every tenth a document's marker, are
timed from one client. Per size it prints the step's ingest MB/s, ``doc_search`` p50 and
p99 (client side, request to parsed result), and the server's RSS (VmRSS; the chunking
processes' RSS beside it), then the slope of each column against the size on log-log
scales (0: flat, 1: linear).

``--files`` writes each document as a file in folders (``pkg07/sub3/doc000123.md``) under an
``--ingest-root`` and ingests it by ``file_path``, as a source tree is: a search of 2-3 words that
spell no name a hit defines looks for a member in the files its words name
(:meth:`ctxtrio.docs.repository.Repository.files_named`), and every document then has file names.

Sessions: if ``stress/scale_sessions.py`` is present, its ``measure_sessions`` runs for
1k, 10k and 100k entries (``--sessions``) and its table is printed too.

Exits 1 if a search misses a marker or an ingest fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from harness import start_http_server, stop_server
from mcp import Client
from proc_cpu import rss_mb

from testkit.results import text_of  # on sys.path through harness

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True, slots=True)
class Row:
    docs: int
    ingest_mb_s: float
    search_p50_ms: float
    search_p99_ms: float
    rss_mb: float
    workers_rss_mb: float


class Corpus:
    """Deterministic markdown documents of about ``size_bytes``, cheap to make by the thousand."""

    def __init__(self, size_bytes: int, seed: int = 11) -> None:
        rng = random.Random(seed)
        letters = "etaoinshrdlucmfwypvbgkjqxz"
        self.words = sorted({"".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(20_000)})
        self.paragraphs = [self._paragraph(rng) for _ in range(3000)]
        self.size_bytes = size_bytes

    def _paragraph(self, rng: random.Random) -> str:
        roll = rng.random()
        if roll < 0.1:
            return f"## {' '.join(rng.choices(self.words, k=3)).title()}\n\n"
        if roll < 0.15:
            name = "_".join(rng.choices(self.words, k=2))
            return f"```python\ndef {name}(value):\n    return {rng.choice(self.words)}(value)\n```\n\n"
        sentences = (
            " ".join(rng.choices(self.words, k=rng.randint(8, 18))).capitalize() + "." for _ in range(rng.randint(3, 6))
        )
        return " ".join(sentences) + "\n\n"

    @staticmethod
    def marker(number: int) -> str:
        return f"scalemarker{number:06d}"

    def document(self, number: int) -> str:
        rng = random.Random(number)
        parts = [f"# Document {number}\n\nThis document holds {self.marker(number)} once.\n\n"]
        size = len(parts[0])
        while size < self.size_bytes:
            paragraph = self.paragraphs[rng.randrange(len(self.paragraphs))]
            parts.append(paragraph)
            size += len(paragraph)
        return "".join(parts)


def children_rss_mb(pid: int) -> float:
    """Summed VmRSS of the direct children of ``pid`` (the chunking processes)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            total += rss_mb(int(stat.parent.name))
    return total


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def file_path(number: int) -> str:
    """Where ``--files`` writes document ``number``, under the ingest root: in folders, as a source tree's."""
    return f"pkg{number % 50:02d}/sub{number % 7}/doc{number:06d}.md"


def write_files(corpus: Corpus, files: Path, first: int, last: int) -> None:
    """Write documents ``first`` .. ``last - 1`` under ``files`` (blocking: in a thread), before they are ingested."""
    for number in range(first, last):
        path = files / file_path(number)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(corpus.document(number), encoding="utf-8")


async def ingest_range(
    url: str, corpus: Corpus, first: int, last: int, clients: int, failures: list[str], files: Path | None = None
) -> float:
    """Ingest documents ``first`` .. ``last - 1`` (``files``: written under that ingest root, ingested by
    ``file_path``); returns MB/s."""
    numbers = iter(range(first, last))
    sent = 0

    async def client() -> None:
        nonlocal sent
        async with Client(url) as session:
            for number in numbers:
                text = corpus.document(number)
                sent += len(text)
                source: dict[str, object] = {"text": text} if files is None else {"file_path": file_path(number)}
                result = await session.call_tool("doc_ingest", {**source, "doc_id": f"doc-{number:06d}"})
                if result.is_error:
                    failures.append(f"doc-{number:06d}: {text_of(result)[:200]}")

    if files is not None:
        await trio.to_thread.run_sync(write_files, corpus, files, first, last)
    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(min(clients, last - first)):
            nursery.start_soon(client)
    return sent / 1e6 / (time.perf_counter() - started)


async def search_latencies(url: str, corpus: Corpus, docs: int, searches: int, failures: list[str]) -> list[float]:
    rng = random.Random(docs)
    latencies: list[float] = []
    async with Client(url) as session:
        await session.call_tool("doc_search", {"query": "warm up", "limit": 5})
        for number in range(searches):
            marker = number % 10 == 0
            wanted = corpus.marker(rng.randrange(docs)) if marker else ""
            query = wanted or " ".join(rng.choices(corpus.words, k=rng.randint(2, 3)))
            began = time.perf_counter()
            result = await session.call_tool("doc_search", {"query": query, "budget_tokens": 2000, "limit": 5})
            latencies.append(time.perf_counter() - began)
            if result.is_error or (wanted and wanted not in text_of(result)):
                failures.append(f"search {query!r}: {text_of(result)[:200]}")
    return latencies


async def grow(
    sizes: list[int], kb: int, clients: int, searches: int, *, in_files: bool = False
) -> tuple[list[Row], list[str]]:
    corpus = Corpus(kb * 1024)
    rows: list[Row] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        files = Path(tmp) / "files" if in_files else None
        extra = ("--ingest-root", str(files)) if files is not None else ()
        if files is not None:
            files.mkdir()
        process, url = await start_http_server(Path(tmp) / "data", *extra)
        assert process.stderr is not None
        stderr = process.stderr
        try:
            async with trio.open_nursery() as nursery:

                async def drain() -> None:
                    while await stderr.receive_some():
                        pass

                nursery.start_soon(drain)
                have = 0
                for size in sorted(sizes):
                    mb_s = await ingest_range(url, corpus, have, size, clients, failures, files)
                    have = size
                    latencies = await search_latencies(url, corpus, size, searches, failures)
                    rows.append(
                        Row(
                            size,
                            mb_s,
                            statistics.median(latencies) * 1000,
                            percentile(latencies, 0.99) * 1000,
                            rss_mb(process.pid),
                            children_rss_mb(process.pid),
                        )
                    )
                    print_row(rows[-1], flush=True)
                nursery.cancel_scope.cancel()
        finally:
            await stop_server(process)
    return rows, failures


HEADER = f"{'docs':>7} {'ingest MB/s':>12} {'search p50 ms':>14} {'search p99 ms':>14} {'server RSS MB':>14} {'workers RSS MB':>15}"


def print_row(row: Row, *, flush: bool = False) -> None:
    print(
        f"{row.docs:>7} {row.ingest_mb_s:>12.1f} {row.search_p50_ms:>14.2f} {row.search_p99_ms:>14.2f} "
        f"{row.rss_mb:>14.1f} {row.workers_rss_mb:>15.1f}",
        flush=flush,
    )


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log(y) against log(x): 0 flat, 1 linear."""
    points = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len(points) < 2:
        return float("nan")
    mean_x = statistics.fmean(p[0] for p in points)
    mean_y = statistics.fmean(p[1] for p in points)
    spread = sum((p[0] - mean_x) ** 2 for p in points)
    return sum((p[0] - mean_x) * (p[1] - mean_y) for p in points) / spread if spread else float("nan")


def print_slopes(label: str, xs: Sequence[float], columns: dict[str, Sequence[float]]) -> None:
    parts = [f"{name} {slope(xs, values):+.2f}" for name, values in columns.items()]
    print(f"slope against {label} (log-log): " + ", ".join(parts))


def load_sessions() -> Callable[[list[int]], list[dict[str, float]]] | None:
    """``measure_sessions`` from stress/scale_sessions.py, when that script exists."""
    path = HERE / "scale_sessions.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("scale_sessions", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    measure: Callable[[list[int]], list[dict[str, float]]] = module.measure_sessions
    return measure


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, nargs="+", default=[10, 100, 1000, 10_000])
    parser.add_argument("--kb", type=int, default=100, help="size of each document in KB")
    parser.add_argument("--clients", type=int, default=16, help="concurrent ingest clients")
    parser.add_argument("--searches", type=int, default=100, help="doc_search calls per size")
    parser.add_argument("--sessions", type=int, nargs="*", default=[1000, 10_000, 100_000])
    parser.add_argument("--no-sessions", action="store_true")
    parser.add_argument("--files", action="store_true", help="documents as files in folders, ingested by file_path")
    args = parser.parse_args()
    started = time.perf_counter()
    kind = "files in folders" if args.files else "documents"
    print(f"{kind} of {args.kb} KB, {args.clients} ingest clients, {args.searches} searches per size")
    print(HEADER)
    rows, failures = trio.run(partial(grow, args.docs, args.kb, args.clients, args.searches, in_files=args.files))
    xs = [float(row.docs) for row in rows]
    print_slopes(
        "documents",
        xs,
        {
            "ingest MB/s": [row.ingest_mb_s for row in rows],
            "search p50": [row.search_p50_ms for row in rows],
            "search p99": [row.search_p99_ms for row in rows],
            "server RSS": [row.rss_mb for row in rows],
        },
    )
    measure = None if args.no_sessions or not args.sessions else load_sessions()
    if measure is not None:
        print(f"\nsessions: {'entries':>8} {'first recall ms':>16} {'warm recall ms':>15} {'list ms':>8} {'RSS MB':>7}")
        results = measure(list(args.sessions))
        for found in results:
            print(
                f"          {found['entries']:>8.0f} {found['first_recall_ms']:>16.1f} {found['warm_recall_ms']:>15.2f} "
                f"{found['list_sessions_ms']:>8.1f} {found['rss_mb']:>7.1f}"
            )
        print_slopes(
            "entries",
            [found["entries"] for found in results],
            {
                key: [found[key] for found in results]
                for key in ("first_recall_ms", "warm_recall_ms", "list_sessions_ms", "rss_mb")
            },
        )
    elif not args.no_sessions:
        print("\nsessions: stress/scale_sessions.py not found; skipped")
    for failure in failures[:10]:
        print("FAIL", failure)
    print(f"total {time.perf_counter() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
