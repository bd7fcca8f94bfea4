"""Where an ingest's CPU goes: per process and per server thread, during the ingest only.

    python stress/ingest_cpu.py                  # bench_docs.py's load: 50 x 100 KB over stdio
    python stress/ingest_cpu.py --docs 5 --kb 1000 --runs 3
    python stress/ingest_cpu.py --corpus stdlib --sequential --runs 1   # real text (stress/real_text.py)

Spawns ``python -m ctxtrio --no-llm`` as ``stress/bench_docs.py`` does, ingests one
20 KB document first (it starts the chunking processes), then ingests the documents
all at once and reads, from ``/proc``, the CPU time (user + system) each process and
each server thread spent between just before the first call and the last answer: the
server's event loop (SDK, transport, ingest orchestration, pipes to the chunking
processes), its worker threads together (FTS5 inserts, journal writes and fsyncs,
hashing: trio reuses and renames them, so they are not told apart), the chunking
processes, and this client. Linux only (``/proc``).

The total against the wall time says how busy the machine's cores were; at 2 cores
and ~1.2 CPU-s per 5 MB, ``bench_docs``' 0.31 s goal needs half the CPU there is now.

``--corpus`` ingests real text instead (:mod:`real_text`: ``stdlib``, ``docs``, ``log``,
``cjk``), one document per file; ``--sequential`` makes one call at a time (as a client
walking a tree does) instead of all at once. The last line is the server's and its
chunking processes' CPU seconds per MB, the figure issue 23 budgets.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from bench_docs import markdown_document, vocabulary
from mcp import Client
from proc_cpu import children, cpu_seconds, threads
from real_text import CORPORA, load

from testkit.servers import server_params


async def ingest_all(client: Client, docs: list[str], *, sequential: bool, prefix: str) -> None:
    """``doc_ingest`` every text (doc ids ``{prefix}-{n}``): one call at a time, or all at once."""
    if sequential:
        for number, text in enumerate(docs):
            await client.call_tool("doc_ingest", {"text": text, "doc_id": f"{prefix}-{number}"})
        return
    async with trio.open_nursery() as nursery:
        for number, text in enumerate(docs):
            nursery.start_soon(client.call_tool, "doc_ingest", {"text": text, "doc_id": f"{prefix}-{number}"})


async def run_once(docs: list[str], data_dir: Path, sequential: bool = False) -> dict[str, float]:
    """One fresh server: the CPU seconds of each part during the ingest, and its wall time."""
    async with Client(server_params(data_dir)) as client:
        await client.list_tools()
        await client.call_tool("doc_ingest", {"text": docs[0][:20_000] + " warm", "doc_id": "warm-up"})
        (server,) = children(os.getpid())
        workers = children(server)
        threads_before = threads(server)
        workers_before = {pid: cpu_seconds(f"/proc/{pid}/stat") for pid in workers}
        client_before = time.process_time()
        started = time.perf_counter()
        await ingest_all(client, docs, sequential=sequential, prefix="cpu")
        wall = time.perf_counter() - started
        client_cpu = time.process_time() - client_before
        parts: dict[str, float] = {"wall": wall, "client (this process)": client_cpu}
        for task, (name, seconds) in threads(server).items():
            spent = seconds - threads_before.get(task, (name, 0.0))[1]
            label = "server event loop" if task == str(server) else "server worker threads"
            parts[label] = parts.get(label, 0.0) + spent
        for pid in children(server):
            parts["chunking processes"] = (
                parts.get("chunking processes", 0.0) + cpu_seconds(f"/proc/{pid}/stat") - workers_before.get(pid, 0.0)
            )
    return parts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--kb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpus", choices=sorted(CORPORA), help="real text instead of bench_docs' markdown")
    parser.add_argument("--sequential", action="store_true", help="one call at a time instead of all at once")
    args = parser.parse_args()
    if not Path("/proc/self/task").is_dir():
        print("needs Linux /proc", file=sys.stderr)
        return 2
    if args.corpus:
        docs = [doc.text for doc in load(args.corpus)]
        what = f"{args.corpus}: {len(docs)} files"
    else:
        rng = random.Random(7)
        words = vocabulary(rng)
        docs = [markdown_document(rng, words, number, args.kb * 1024) for number in range(args.docs)]
        what = f"{args.docs} x {args.kb} KB"
    megabytes = sum(len(text.encode("utf-8", "surrogatepass")) for text in docs) / 1e6
    runs: list[dict[str, float]] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="ingest-cpu-") as tmp:
            runs.append(trio.run(run_once, docs, Path(tmp), args.sequential))
    labels = sorted(
        {label for run in runs for label in run} - {"wall"},
        key=lambda label: -statistics.median(r.get(label, 0.0) for r in runs),
    )
    mode = "one call at a time" if args.sequential else "all calls at once"
    print(f"{what} = {megabytes:.2f} MB, {mode}, median of {args.runs} fresh servers (CPU seconds, user + system)")
    print(f"  {'wall':<40} {statistics.median(r['wall'] for r in runs):7.3f}")
    total = 0.0
    for label in labels:
        median = statistics.median(r.get(label, 0.0) for r in runs)
        if median >= 0.005:
            print(f"  {label:<40} {median:7.3f}")
        total += median
    print(
        f"  {'total CPU':<40} {total:7.3f}  ({total / statistics.median(r['wall'] for r in runs):.2f} cores busy on average)"
    )
    server = sum(
        statistics.median(r.get(label, 0.0) for r in runs) for label in labels if label != "client (this process)"
    )
    print(
        f"  server + chunking processes: {server:.2f} CPU-s = {server / megabytes:.3f} CPU-s per MB; {megabytes / statistics.median(r['wall'] for r in runs):.2f} MB/s; load {os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
