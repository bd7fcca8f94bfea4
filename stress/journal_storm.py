"""Journal storm: K processes x C concurrent appenders x N records into shared journals.

Prints acknowledged appends/s, p50/p99 acknowledgement latency and fsyncs/s, then
verifies that every acknowledged record is in the journals exactly once. Also measures
the same machine's fsync-per-append rate (one write + one fsync per record), the
baseline group commit is compared with.

    python stress/journal_storm.py                       # K=1 C=64 N=200 J=4
    python stress/journal_storm.py --processes 4 --concurrency 16 --records 200

Exits 1 if anything acknowledged is missing or duplicated.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

ROOT = Path(__file__).resolve().parents[1]

from ctxtrio.store.layout import prepare_data_dir  # noqa: E402
from ctxtrio.store.reading import read_journal  # noqa: E402
from ctxtrio.store.records import NewRecord  # noqa: E402
from ctxtrio.store.writer import run_store_writer  # noqa: E402

if TYPE_CHECKING:
    from ctxtrio.store.handle import StoreHandle


async def worker(data_dir: Path, name: str, concurrency: int, records: int, journals: int) -> dict[str, object]:
    """One process: C appenders, each appending N records round-robin over the journals."""
    data = prepare_data_dir(data_dir)
    latencies: list[float] = []
    acked: list[str] = []
    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(partial(run_store_writer, data, lock_timeout_s=60.0))
        started = trio.current_time()

        paths = [data.session_journal(f"storm-{number}") for number in range(journals)]

        async def appender(lane: int) -> None:
            for number in range(records):
                key = f"{name}/{lane}/{number}"
                path = paths[(lane + number) % journals]
                before = trio.current_time()
                await store.append(path, [NewRecord("entry", {"text": f"storm record {key}"}, id_prefix="e")])
                latencies.append(trio.current_time() - before)
                acked.append(key)

        async with trio.open_nursery() as lanes:
            for lane in range(concurrency):
                lanes.start_soon(appender, lane)
        elapsed = trio.current_time() - started
        fsyncs = store.stats.fsyncs
        batches = store.stats.batches
        await store.aclose()
    return {"acked": acked, "latencies": latencies, "elapsed": elapsed, "fsyncs": fsyncs, "batches": batches}


def fsync_per_append_rate(directory: Path, count: int = 500) -> float:
    """Appends/s when every record gets its own write and fsync (the naive way)."""
    path = directory / "baseline.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    started = time.perf_counter()
    try:
        for number in range(count):
            os.write(fd, json.dumps({"seq": number, "text": "baseline record"}).encode() + b"\n")
            os.fsync(fd)
    finally:
        os.close(fd)
    return count / (time.perf_counter() - started)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", "-k", type=int, default=1)
    parser.add_argument("--concurrency", "-c", type=int, default=64)
    parser.add_argument("--records", "-n", type=int, default=200, help="records per appender")
    parser.add_argument("--journals", "-j", type=int, default=4)
    parser.add_argument("--worker", nargs=2, metavar=("DATA_DIR", "NAME"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        data_dir, name = args.worker
        result = trio.run(worker, Path(data_dir), name, args.concurrency, args.records, args.journals)
        print(json.dumps(result))
        return 0

    with tempfile.TemporaryDirectory(prefix="journal-storm-", dir=os.environ.get("STORM_DIR")) as tmp:
        data_dir = Path(tmp) / "data"
        baseline = fsync_per_append_rate(Path(tmp))
        command = [
            sys.executable,
            __file__,
            "-c",
            str(args.concurrency),
            "-n",
            str(args.records),
            "-j",
            str(args.journals),
        ]
        started = time.perf_counter()
        procs = [
            subprocess.Popen([*command, "--worker", str(data_dir), f"p{index}"], stdout=subprocess.PIPE, text=True)
            for index in range(args.processes)
        ]
        outputs = [proc.communicate()[0] for proc in procs]
        wall = time.perf_counter() - started
        if any(proc.returncode != 0 for proc in procs):
            print("a worker process failed", file=sys.stderr)
            return 1
        results = [json.loads(output) for output in outputs]
        acked = [key for result in results for key in result["acked"]]
        latencies = [value for result in results for value in result["latencies"]]
        fsyncs = sum(int(result["fsyncs"]) for result in results)
        batches = sum(int(result["batches"]) for result in results)
        busy = max(float(result["elapsed"]) for result in results)

        seen: dict[str, int] = {}
        for journal in sorted((data_dir / "sessions").glob("storm-*.jsonl")):
            loaded = read_journal(journal)
            if loaded.quarantined or loaded.torn_tail_bytes:
                print(f"{journal.name}: {len(loaded.quarantined)} malformed, {loaded.torn_tail_bytes} torn bytes")
                return 1
            seqs = [record.seq for record in loaded.records]
            if seqs != list(range(1, len(seqs) + 1)):
                print(f"{journal.name}: sequence numbers are not 1..n")
                return 1
            for record in loaded.records:
                key = str(record.data["text"]).removeprefix("storm record ")
                seen[key] = seen.get(key, 0) + 1
        missing = [key for key in acked if seen.get(key, 0) == 0]
        duplicated = [key for key, count in seen.items() if count > 1]

    total = len(acked)
    print(
        f"processes={args.processes} appenders/process={args.concurrency} records/appender={args.records} journals={args.journals}"
    )
    print(f"acknowledged appends: {total} in {busy:.3f} s (wall incl. process start {wall:.2f} s)")
    print(f"acknowledged appends/s: {total / busy:,.0f}")
    print(
        f"ack latency p50: {statistics.median(latencies) * 1000:.2f} ms  p99: {percentile(latencies, 0.99) * 1000:.2f} ms"
    )
    print(
        f"fsyncs: {fsyncs} ({fsyncs / busy:,.0f}/s) in {batches} batches; {total / max(fsyncs, 1):.1f} appends per fsync"
    )
    print(f"baseline fsync-per-append on this machine: {baseline:,.0f} appends/s")
    print(f"verified: {total - len(missing)} of {total} present, {len(missing)} missing, {len(duplicated)} duplicated")
    return 1 if missing or duplicated or len(seen) != total else 0


if __name__ == "__main__":
    raise SystemExit(main())
