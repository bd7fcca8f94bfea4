"""Ingest side by side with another MCP server (the original TypeScript one), same client, same sitting.

    python stress/peer_ingest.py --peer "node /path/to/original/dist/index.js" --corpus stdlib
    python stress/peer_ingest.py --peer "node ..." --synthetic --rounds 3

Starts each server over stdio on a fresh data dir (ctxtrio: ``python -m ctxtrio
--no-llm --no-audit``; the peer: its command plus ``--data-dir DIR --no-llm
--no-audit``), with the official Python SDK client, and ingests:

* ``--corpus NAME`` (:mod:`real_text`): one ``doc_ingest`` per file, one call at a
  time, as a client walking a tree does; then ``--queries`` identifier searches
  (``doc_search`` over all documents: names of functions and classes defined in the
  corpus, chosen with a fixed seed) and their p50.
* ``--synthetic``: ``bench_docs``' 50 markdown documents of 100 KB, all calls at once.

For each server: wall time of the ingest, MB/s, and the CPU seconds (user + system,
from ``/proc``) of the server and every process under it during the ingest, per MB.
Rounds alternate between the servers (``--rounds``, median reported), so load on a
shared machine hits both alike. Linux only.

The clock starts when ``tools/list`` is answered. ctxtrio's warm start answers it from
recorded answers while the server still imports (about 1.6 CPU-s), so the ingest's wall
and CPU include the rest of that start-up, as a host sees it. The recording is keyed by
the checkout's files and lives in the user's cache dir, which every checkout on the
account shares: a run right after another checkout's server would start cold and leave
the import out. So ctxtrio gets a cache dir of this checkout's own (``XDG_CACHE_HOME``,
under the temp dir), filled by one start before the rounds: every round starts warm.
The checkout is byte-compiled first, as an install is (``proc_cpu.byte_compiled``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from bench_docs import ROOT, markdown_document, vocabulary
from ingest_cpu import ingest_all
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from proc_cpu import TreeMeter, byte_compiled, children
from real_text import CORPORA, identifier_queries, load

#: ctxtrio's cache dir for these runs (its warm start's recorded answers): one per checkout.
CACHE = Path(tempfile.gettempdir()) / f"ctxtrio-bench-cache-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]}"


def params(command: list[str], data_dir: Path) -> StdioServerParameters:
    args = [*command[1:], "--data-dir", str(data_dir), "--no-llm", "--no-audit"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if command[1:3] == ["-m", "ctxtrio"]:
        env["XDG_CACHE_HOME"] = str(CACHE)
    return StdioServerParameters(command=command[0], args=args, cwd=ROOT, env=env)


async def record_first_answers(command: list[str]) -> None:
    """Start the server once, so that its warm start answers the first requests of every round."""
    with tempfile.TemporaryDirectory(prefix="peer-ingest-") as tmp:
        async with Client(params(command, Path(tmp))) as client:
            await client.list_tools()


async def run_server(command: list[str], docs: list[str], sequential: bool, queries: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="peer-ingest-") as tmp:
        async with Client(params(command, Path(tmp))) as client:
            await client.list_tools()
            (server,) = children(os.getpid())
            meter = TreeMeter(server)
            started = time.perf_counter()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(meter.run)
                await ingest_all(client, docs, sequential=sequential, prefix="peer")
                nursery.cancel_scope.cancel()
            meter.sample()
            wall = time.perf_counter() - started
            cpu = meter.spent()
            search_ms: list[float] = []
            for query in queries:
                asked = time.perf_counter()
                await client.call_tool("doc_search", {"query": query})
                search_ms.append((time.perf_counter() - asked) * 1000)
    result = {"wall": wall, "cpu": cpu}
    if search_ms:
        result["search_p50_ms"] = statistics.median(search_ms)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", help="command that starts the other server over stdio (split like a shell)")
    parser.add_argument("--corpus", choices=sorted(CORPORA))
    parser.add_argument("--synthetic", action="store_true", help="bench_docs' 50 x 100 KB markdown, all at once")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--queries", type=int, default=100, help="identifier searches after a corpus ingest")
    parser.add_argument("--only", choices=["ctxtrio", "peer"], help="run one of the two servers only")
    args = parser.parse_args()
    if args.synthetic == (args.corpus is not None):
        parser.error("pass exactly one of --corpus and --synthetic")
    if args.corpus:
        docs = [doc.text for doc in load(args.corpus)]
        queries = identifier_queries(docs, args.queries)
        what = f"{args.corpus}: {len(docs)} files, one doc_ingest at a time"
    else:
        rng = random.Random(7)
        words = vocabulary(rng)
        docs = [markdown_document(rng, words, number, 100 * 1024) for number in range(50)]
        queries = []
        what = "50 x 100 KB synthetic markdown, all calls at once"
    megabytes = sum(len(text.encode("utf-8", "surrogatepass")) for text in docs) / 1e6
    servers: dict[str, list[str]] = {"ctxtrio": [sys.executable, "-m", "ctxtrio"]}
    if args.peer:
        servers["peer"] = shlex.split(args.peer)
    if args.only:
        servers = {args.only: servers[args.only]}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
    if "ctxtrio" in servers:
        byte_compiled(ROOT)
        trio.run(record_first_answers, servers["ctxtrio"])
    for _ in range(args.rounds):
        for name, command in servers.items():
            results[name].append(trio.run(run_server, command, docs, args.corpus is not None, queries))
    print(f"{what}: {megabytes:.2f} MB; median of {args.rounds} alternating round(s); load {os.getloadavg()[0]:.1f}")
    for name, runs in results.items():
        wall = statistics.median(run["wall"] for run in runs)
        cpu = statistics.median(run["cpu"] for run in runs)
        line = f"  {name:<8} wall {wall:7.2f} s  {megabytes / wall:5.2f} MB/s  server CPU {cpu:6.2f} s = {cpu / megabytes:.3f} CPU-s/MB"
        if queries:
            line += f"  search p50 {statistics.median(run['search_p50_ms'] for run in runs):8.1f} ms"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
