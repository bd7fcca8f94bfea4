"""Document ingest and search over stdio, driven by the official SDK client.

Run as ``python stress/bench_docs.py`` from the repository root. Spawns
``python -m ctxtrio --no-llm`` on a fresh data dir, ingests N markdown documents of
S KB as inline text (``--concurrency`` calls in flight), then makes ``--searches``
sequential ``doc_search`` calls of 2-3 words across all documents. Prints the total
ingest time, MB/s and the search round-trip p50/p95 (client side: request to parsed
result). Add ``--runs 3`` for best and median over several fresh servers.

``--corpus stdlib`` (or ``docs``, ``log``, ``cjk``: :mod:`real_text`) ingests real
text instead, one document per file, and searches for names of functions and classes
defined in it. Every run also prints the CPU seconds (user + system, from ``/proc``)
the server and its chunking processes spent on the ingest, per MB.

``--stall-mb 20`` instead writes one markdown file of that many MB under an ingest
root, ingests it by ``file_path``, and meanwhile calls ``context_status`` (or
``context_guide`` where the server has no context_status) every 20 ms; it prints the
ingest time and the latency of those calls (they must stay under 100 ms).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from mcp import Client
from proc_cpu import TreeMeter, children
from real_text import CORPORA, identifier_queries, load

ROOT = Path(__file__).resolve().parent.parent

from testkit.results import text_of  # noqa: E402
from testkit.servers import server_params  # noqa: E402


@dataclass(frozen=True, slots=True)
class RunResult:
    ingest_s: float
    mb: float
    search_p50_ms: float
    search_p95_ms: float
    empty_searches: int
    server_cpu_s: float = 0.0


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    return sorted({"".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(size)})


def markdown_document(rng: random.Random, words: list[str], number: int, size_bytes: int) -> str:
    """A manual-like markdown document: headings, paragraphs, lists, code; one unique phrase."""
    parts = [f"# Manual {number}\n\nThis manual mentions uniq{number}marker once.\n\n"]
    size = len(parts[0])
    section = 0
    while size < size_bytes:
        section += 1
        block = [f"## {' '.join(rng.choices(words, k=3)).title()} {section}\n\n"]
        for _ in range(rng.randint(2, 4)):
            sentences = (
                " ".join(rng.choices(words, k=rng.randint(8, 18))).capitalize() + "." for _ in range(rng.randint(3, 6))
            )
            block.append(" ".join(sentences) + "\n\n")
        if section % 3 == 0:
            name = "_".join(rng.choices(words, k=2))
            block.append(
                f"```python\ndef {name}(value):\n    return {rng.choice(words)}(value, retries={section})\n```\n\n"
            )
        if section % 4 == 0:
            block.append("".join(f"- {' '.join(rng.choices(words, k=5))}\n" for _ in range(4)) + "\n")
        text = "".join(block)
        parts.append(text)
        size += len(text)
    return "".join(parts)


async def run_once(docs: list[str], queries: list[str], concurrency: int, data_dir: Path) -> RunResult:
    async with Client(server_params(data_dir)) as client:
        await client.list_tools()
        await client.call_tool("doc_list", {})  # first use opens the catalog
        limiter = trio.CapacityLimiter(concurrency)
        failures: list[str] = []

        async def ingest(number: int, text: str) -> None:
            async with limiter:
                result = await client.call_tool("doc_ingest", {"text": text, "doc_id": f"bench-{number}"})
            if result.is_error:
                failures.append(text_of(result))

        (server,) = children(os.getpid())
        meter = TreeMeter(server)
        started = time.perf_counter()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(meter.run)
            async with trio.open_nursery() as calls:
                for number, text in enumerate(docs):
                    calls.start_soon(ingest, number, text)
            nursery.cancel_scope.cancel()
        ingest_s = time.perf_counter() - started
        meter.sample()
        if failures:
            raise SystemExit(f"ingest failed: {failures[0]}")
        latencies: list[float] = []
        empty = 0
        for query in queries:
            began = time.perf_counter()
            result = await client.call_tool("doc_search", {"query": query, "budget_tokens": 2000, "limit": 5})
            latencies.append(time.perf_counter() - began)
            if result.is_error:
                raise SystemExit(f"search failed: {text_of(result)}")
            empty += text_of(result).startswith("No chunk")
    latencies.sort()
    mb = sum(len(text.encode("utf-8", "surrogatepass")) for text in docs) / 1e6
    p95 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))]
    return RunResult(ingest_s, mb, statistics.median(latencies) * 1000, p95 * 1000, empty, meter.spent())


async def stall_once(text: str, tmp: Path) -> None:
    """Ingest one big file while probing another tool; print both timings."""
    root = tmp / "root"
    root.mkdir()
    (root / "big.md").write_text(text)
    limit = str(len(text.encode()) + 1)
    async with Client(server_params(tmp / "data", "--ingest-root", str(root), "--max-ingest-chars", limit)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        probe, arguments = "context_guide", {}
        if "context_status" in names:
            opened = await client.call_tool("context_open", {"session_id": "probe"})
            assert not opened.is_error, text_of(opened)
            probe, arguments = "context_status", {"session_id": "probe"}
        await client.call_tool(probe, arguments)
        latencies: list[float] = []
        finished = trio.Event()
        ingest_s = 0.0

        async def ingest() -> None:
            nonlocal ingest_s
            began = time.perf_counter()
            result = await client.call_tool("doc_ingest", {"file_path": "big.md", "doc_id": "big"})
            ingest_s = time.perf_counter() - began
            finished.set()
            if result.is_error:
                raise SystemExit(f"ingest failed: {text_of(result)}")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(ingest)
            while not finished.is_set():
                began = time.perf_counter()
                result = await client.call_tool(probe, arguments)
                latencies.append(time.perf_counter() - began)
                if result.is_error:
                    raise SystemExit(f"{probe} failed: {text_of(result)}")
                await trio.sleep(0.02)
    latencies.sort()
    mb = len(text.encode()) / 1e6
    print(
        f"ingest of one {mb:.1f} MB file: {ingest_s:.2f} s ({mb / ingest_s:.1f} MB/s); {len(latencies)} {probe} calls "
        f"during it: p50 {statistics.median(latencies) * 1000:.1f} ms, p95 {latencies[int(len(latencies) * 0.95)] * 1000:.1f} ms, "
        f"max {latencies[-1] * 1000:.1f} ms, {sum(latency > 0.1 for latency in latencies)} over 100 ms"
    )


async def main_async(args: argparse.Namespace) -> list[RunResult]:
    rng = random.Random(7)
    words = vocabulary(rng)
    if args.stall_mb:
        big = markdown_document(rng, words, 0, int(args.stall_mb * 1_000_000))
        with tempfile.TemporaryDirectory(prefix="bench-docs-") as tmp:
            await stall_once(big, Path(tmp))
        return []
    if args.corpus:
        docs = [doc.text for doc in load(args.corpus)]
        queries = identifier_queries(docs, args.searches)
        what = f"{args.corpus}: {len(docs)} files"
    else:
        docs = [markdown_document(rng, words, number, args.kb * 1024) for number in range(args.docs)]
        queries = [" ".join(rng.choices(words, k=rng.randint(2, 3))) for _ in range(args.searches)]
        what = f"{args.docs} x {args.kb} KB"
    results: list[RunResult] = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="bench-docs-") as tmp:
            result = await run_once(docs, queries, args.concurrency, Path(tmp) / "data")
        results.append(result)
        print(
            f"run {run + 1}: ingest {what} = {result.mb:.2f} MB in {result.ingest_s:.3f} s "
            f"({result.mb / result.ingest_s:.1f} MB/s; server + chunking CPU {result.server_cpu_s:.2f} s = "
            f"{result.server_cpu_s / result.mb:.3f} CPU-s/MB; load {os.getloadavg()[0]:.1f}); doc_search p50 {result.search_p50_ms:.2f} ms, "
            f"p95 {result.search_p95_ms:.2f} ms ({args.searches} calls, {result.empty_searches} without hits)"
        )
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=50, help="documents to ingest (N)")
    parser.add_argument("--kb", type=int, default=100, help="size of each document in KB (S)")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50, help="ingest calls in flight")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--corpus", choices=sorted(CORPORA), help="real text (stress/real_text.py) instead of markdown")
    parser.add_argument("--stall-mb", type=float, default=0.0, help="ingest one file of this many MB while probing")
    args = parser.parse_args()
    results = trio.run(main_async, args)
    if len(results) > 1:
        ingest = sorted(result.ingest_s for result in results)
        p50 = sorted(result.search_p50_ms for result in results)
        print(
            f"best/median of {len(results)}: ingest {ingest[0]:.3f}/{statistics.median(ingest):.3f} s, "
            f"search p50 {p50[0]:.2f}/{statistics.median(p50):.2f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
