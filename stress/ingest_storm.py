"""Ingest storm: many concurrent clients ingest documents over HTTP while another polls status.

Starts the real server over Streamable HTTP on 127.0.0.1:0, then M concurrent SDK
clients ingest D documents (mixed sizes up to 1 MB, some Korean and Chinese) while one
more client calls ``context_status`` in a loop. Prints throughput (MB/s), p50/p99 ingest
latency and p50/p99 status latency, then verifies that every document is listed with the
chunk count its ingest reported and that a phrase unique to each is found by
``doc_search``.

    python stress/ingest_storm.py --clients 100 --docs 100 --size-kb 1024   # the must-show
    python stress/ingest_storm.py                                          # mixed sizes
    python stress/ingest_storm.py --clients 50 --docs 50 --size-kb 1024 --corpus stdlib   # real text

``--corpus`` (:mod:`real_text`) cuts the documents from real text instead (the stdlib
sources joined in order; each gets its unique marker line first). Every run prints the
CPU seconds (user + system, ``/proc``) of the server and its chunking processes during
the storm, per MB.

Exits 1 on any loss.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from harness import start_http_server, stop_server
from mcp import Client
from proc_cpu import TreeMeter
from real_text import CORPORA, concatenated, load

from testkit.results import text_of  # on sys.path through harness

_WORDS = (
    "cache shard replica index journal budget window cursor outline summary token stream "
    "buffer latency retry breaker deadline nursery channel writer reader session document"
).split()
_KOREAN = "서버 저장소 문서 검색 요약 세션 토큰 예산 창 커서 색인 복구 결정 제약 확인".split()
_CHINESE = "服务器 存储 文档 检索 摘要 会话 令牌 预算 窗口 游标 索引 恢复 决定 约束 确认".split()


@dataclass
class Doc:
    doc_id: str
    text: str
    marker: str
    chunks: int = -1
    latency_s: float = 0.0


def make_doc(number: int, size_bytes: int, rng: random.Random) -> Doc:
    """Markdown with headings; every fifth in Korean, every fifth in Chinese; one unique marker word."""
    marker = f"stormmarker{number:04d}q{rng.randrange(10**6):06d}"
    vocabulary = _KOREAN if number % 5 == 1 else _CHINESE if number % 5 == 2 else _WORDS
    parts: list[str] = [f"# Storm document {number}\n\n"]
    size = len(parts[0].encode())
    section = 0
    while size < size_bytes:
        if rng.random() < 0.08:
            section += 1
            block = f"\n## Section {section}\n\n"
        else:
            block = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(20, 60))) + ".\n\n"
        parts.append(block)
        size += len(block.encode())
    middle = len(parts) // 2
    parts.insert(middle, f"The marker of this document is {marker}.\n\n")
    return Doc(f"storm-{number:04d}", "".join(parts), marker)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


async def ingester(url: str, receive: trio.MemoryReceiveChannel[Doc], failures: list[str]) -> None:
    """One client: ingest documents from ``receive`` until it is empty; time each, note failures."""
    async with Client(url) as client, receive.clone() as mine:
        async for doc in mine:
            started = time.perf_counter()
            result = await client.call_tool("doc_ingest", {"text": doc.text, "doc_id": doc.doc_id, "title": doc.doc_id})
            doc.latency_s = time.perf_counter() - started
            if result.is_error or not isinstance(result.structured_content, dict):
                failures.append(f"{doc.doc_id}: ingest failed: {text_of(result)[:200]}")
                continue
            doc.chunks = int(result.structured_content["chunks"])


async def run(clients: int, docs: list[Doc]) -> int:
    with tempfile.TemporaryDirectory(prefix="ingest-storm-") as tmp:
        process, url = await start_http_server(Path(tmp) / "data")
        # Drain the server's stderr so its pipe never fills.
        assert process.stderr is not None
        stderr = process.stderr
        status_latencies: list[float] = []
        status_times: list[float] = []
        failures: list[str] = []
        try:
            async with trio.open_nursery() as nursery:

                async def drain_stderr() -> None:
                    while await stderr.receive_some():
                        pass

                nursery.start_soon(drain_stderr)
                async with Client(url) as probe:
                    await probe.call_tool("context_append", {"session_id": "storm-status", "text": "status probe"})
                send, receive = trio.open_memory_channel[Doc](len(docs))
                for doc in docs:
                    send.send_nowait(doc)
                send.close()
                storm_done = trio.Event()

                async def status_loop() -> None:
                    # In its own process: the 100 ingest clients keep this process's event
                    # loop busy encoding megabytes of JSON, which would show up as the
                    # server's latency if the poller shared it.
                    poller = await trio.lowlevel.open_process(
                        [sys.executable, __file__, "--poll-status", url],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                    )
                    assert poller.stdin is not None and poller.stdout is not None
                    await storm_done.wait()
                    await poller.stdin.aclose()
                    output = b""
                    while chunk := await poller.stdout.receive_some():
                        output += chunk
                    await poller.wait()
                    for started_at, latency, error in json.loads(output):
                        if started_at < storm_started:
                            continue  # polled before the storm began
                        status_times.append(started_at)
                        status_latencies.append(latency)
                        if error:
                            failures.append(f"context_status failed: {error[:200]}")

                status_done = trio.Event()
                storm_started = float("inf")

                async def run_status_loop() -> None:
                    await status_loop()
                    status_done.set()

                nursery.start_soon(run_status_loop)
                await trio.sleep(1.0)  # the poller is connected and polling
                meter = TreeMeter(process.pid)
                started = time.time()
                storm_started = started  # read by status_loop once the storm is done
                async with trio.open_nursery() as storm:
                    storm.start_soon(meter.run)
                    async with trio.open_nursery() as ingesters:
                        for _ in range(clients):
                            ingesters.start_soon(ingester, url, receive, failures)
                    storm.cancel_scope.cancel()
                elapsed = time.time() - started
                meter.sample()
                storm_done.set()
                await status_done.wait()
                receive.close()

                lost = await verify(url, docs, failures)
                nursery.cancel_scope.cancel()
        finally:
            await stop_server(process)
    report(clients, docs, elapsed, meter, status_latencies, status_times, storm_started, failures, lost)
    return 1 if lost or failures else 0


def report(
    clients: int,
    docs: list[Doc],
    elapsed: float,
    meter: TreeMeter,
    status_latencies: list[float],
    status_times: list[float],
    storm_started: float,
    failures: list[str],
    lost: int,
) -> None:
    """Print the run's throughput, CPU, latencies, failures and what verify found."""
    total_mb = sum(len(doc.text.encode()) for doc in docs) / 1e6
    ingest = [doc.latency_s for doc in docs if doc.chunks >= 0]
    print(f"clients={clients} documents={len(docs)} total={total_mb:.1f} MB in {elapsed:.2f} s")
    print(
        f"throughput: {total_mb / elapsed:.2f} MB/s, {len(docs) / elapsed:.1f} documents/s; load {os.getloadavg()[0]:.1f}"
    )
    print(f"server + chunking processes: {meter.spent():.2f} CPU-s = {meter.spent() / total_mb:.3f} CPU-s per MB")
    print(f"ingest latency p50: {statistics.median(ingest):.2f} s  p99: {percentile(ingest, 0.99):.2f} s")
    print(
        f"context_status during the storm: {len(status_latencies)} calls, "
        f"p50 {statistics.median(status_latencies) * 1000:.1f} ms  p99 {percentile(status_latencies, 0.99) * 1000:.1f} ms  "
        f"max {max(status_latencies) * 1000:.1f} ms"
    )
    worst = max(range(len(status_latencies)), key=status_latencies.__getitem__)
    print(f"slowest status call started {status_times[worst] - storm_started:+.2f} s into the storm")
    for failure in failures[:10]:
        print("FAIL", failure)
    print(f"verified: {len(docs) - lost} of {len(docs)} documents intact, {lost} lost or wrong")


async def verify(url: str, docs: list[Doc], failures: list[str]) -> int:
    """Every document listed with its chunk count, and found by its unique marker."""
    lost = 0
    async with Client(url) as client:
        listed: set[str] = set()
        offset: object = 0
        while isinstance(offset, int):  # doc_list answers a page at a time (about 100 short entries)
            listing = await client.call_tool("doc_list", {"from": offset})
            page = listing.structured_content if isinstance(listing.structured_content, dict) else {}
            listed.update(str(doc_id) for doc_id in page.get("doc_ids", []))
            offset = page.get("next_offset")
        for doc in docs:
            problems: list[str] = []
            if doc.doc_id not in listed:
                problems.append("not listed")
            outline = await client.call_tool("doc_outline", {"doc_id": doc.doc_id, "max_chunks": 1})
            chunks = outline.structured_content.get("chunks") if isinstance(outline.structured_content, dict) else None
            if outline.is_error or chunks != doc.chunks:
                problems.append(f"chunk count {chunks} != ingested {doc.chunks}")
            found = await client.call_tool("doc_search", {"query": doc.marker, "budget_tokens": 2000, "limit": 3})
            if found.is_error or doc.marker not in text_of(found) or doc.doc_id not in text_of(found):
                problems.append("marker not found by doc_search")
            if problems:
                lost += 1
                failures.append(f"{doc.doc_id}: {'; '.join(problems)}")
    return lost


async def poll_status(url: str) -> None:
    """Call context_status every 10 ms until stdin closes; print [[start, latency, error], ...] as JSON."""
    samples: list[tuple[float, float, str]] = []
    stdin = trio.lowlevel.FdStream(os.dup(0))
    stop = trio.Event()

    async def watch_stdin() -> None:
        while await stdin.receive_some():
            pass
        stop.set()

    async with trio.open_nursery() as nursery, Client(url) as client:
        nursery.start_soon(watch_stdin)
        while not stop.is_set():
            begun = time.time()
            result = await client.call_tool("context_status", {"session_id": "storm-status"})
            samples.append((begun, time.time() - begun, text_of(result) if result.is_error else ""))
            await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    print(json.dumps(samples))


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--poll-status":
        trio.run(poll_status, sys.argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", "-m", type=int, default=20)
    parser.add_argument("--docs", "-d", type=int, default=60)
    parser.add_argument("--size-kb", type=int, default=0, help="every document this size; default: mixed up to 1 MB")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--corpus", choices=sorted(CORPORA), help="documents cut from real text (stress/real_text.py)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sizes = [
        args.size_kb * 1024 if args.size_kb else rng.choice([2, 16, 64, 256, 1024]) * 1024 for _ in range(args.docs)
    ]
    if args.corpus:
        docs = []
        for number, text in enumerate(concatenated(load(args.corpus), sizes)):
            marker = f"stormmarker{number:04d}q{rng.randrange(10**6):06d}"
            docs.append(Doc(f"storm-{number:04d}", f"# {marker}\n\n{text}", marker))
    else:
        docs = [make_doc(number, size, rng) for number, size in enumerate(sizes)]
    return trio.run(run, args.clients, docs)


if __name__ == "__main__":
    raise SystemExit(main())
