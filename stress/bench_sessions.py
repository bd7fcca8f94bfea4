"""Session-memory benchmark: the context_* tools over stdio, and recall in-process at scale.

1. A real server as a stdio subprocess, driven by the official SDK client: N appends
   (durable), then R recalls (2-3 word queries), then S status calls; p50/p95 of each.
   Each call is followed by a ``context_guide`` call, which does no work: its p50 in
   the same phase is the round-trip floor of this machine (SDK client + stdio + SDK
   server) at that moment.
2. In-process (the library, no MCP): M entries in one session, then recall p50/p95.

    python stress/bench_sessions.py                  # N=1000 R=100 S=100 M=10000
    python stress/bench_sessions.py --entries 1000 --scale 10000 --runs 3

Texts are deterministic: words drawn from a Zipf-weighted vocabulary of technical words
and identifiers, so some query words are common (many matches) and some are rare.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

ROOT = Path(__file__).resolve().parents[1]

from typing import TYPE_CHECKING  # noqa: E402

from mcp import Client  # noqa: E402

from ctxtrio._config import Config  # noqa: E402
from ctxtrio._wiring import open_wiring  # noqa: E402
from ctxtrio.store.records import NewRecord  # noqa: E402
from testkit.servers import server_params  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

_BASE = """auth cookie session token login logout user password hash salt database postgres index
query migration schema table column row cache redis eviction timeout retry backoff queue worker
thread lock mutex deadlock race condition build test failure flaky pipeline deploy rollback
release version branch merge conflict commit review config environment variable secret key
endpoint request response header status error exception traceback stack memory leak profile
latency throughput benchmark regression parser lexer token grammar compiler optimizer module
package import dependency interface contract class function method argument parameter return
value type annotation generic protocol async await cancel deadline scope nursery channel stream
socket buffer file path directory journal record offset fsync durable crash recovery replay
index search rank score budget window summary compaction entry pin recall decision constraint
preference goal plan step todo done blocked bug fix patch issue ticket customer invoice payment
order cart checkout shipping address email notification template render layout style widget""".split()


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """Base words, plain pseudo-words, and camelCase / snake_case identifiers, shuffled."""
    words = set(_BASE)
    syllables = "ka lo mi tre sun dor vel pra ni qua zen bor tis mel gan rho sep".split()
    while len(words) < size:
        roll = rng.random()
        if roll < 0.15:
            a, b = rng.choice(_BASE), rng.choice(_BASE)
            words.add(a + b.capitalize() if roll < 0.08 else f"{a}_{b}")
        else:
            words.add("".join(rng.choices(syllables, k=rng.randint(2, 4))))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered


class TextMaker:
    """Deterministic entry texts and queries over a Zipf-weighted vocabulary."""

    def __init__(self, seed: int = 7, size: int = 5000) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(size, self.rng)
        # Zipf over content words: natural text's top ranks are stopwords, which
        # search drops, so content words start a few ranks down.
        self.weights = [1.0 / (rank + 10) for rank in range(len(self.words))]

    def entry(self, number: int) -> str:
        count = self.rng.randint(8, 30)
        body = " ".join(self.rng.choices(self.words, self.weights, k=count))
        return f"Step {number}: {body}."

    def query(self) -> str:
        return " ".join(self.rng.choices(self.words, self.weights, k=self.rng.randint(2, 3)))


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95) in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


async def timed(count: int, call: Callable[[int], Awaitable[object]]) -> list[float]:
    samples: list[float] = []
    for number in range(count):
        started = trio.current_time()
        await call(number)
        samples.append(trio.current_time() - started)
    return samples


Phase = tuple[list[float], list[float]]


async def paired(count: int, call: Callable[[int], Awaitable[object]], floor: Callable[[], Awaitable[object]]) -> Phase:
    """Time ``call`` and, right after each, the no-op ``floor`` call: the machine's load
    changes by the second, so each phase gets its own round-trip floor."""
    samples: list[float] = []
    floors: list[float] = []
    for number in range(count):
        started = trio.current_time()
        await call(number)
        middle = trio.current_time()
        await floor()
        samples.append(middle - started)
        floors.append(trio.current_time() - middle)
    return samples, floors


async def over_stdio(appends: int, recalls: int, statuses: int) -> dict[str, tuple[float, float, float]]:
    """The tools through a stdio subprocess and the SDK client: (p50, p95, floor p50) per phase."""
    maker = TextMaker()
    with tempfile.TemporaryDirectory() as tmp:
        params = server_params(Path(tmp) / "data")
        async with Client(params) as client:

            async def call(tool: str, arguments: dict[str, object]) -> None:
                result = await client.call_tool(tool, arguments)
                if result.is_error:
                    raise RuntimeError(f"{tool} failed: {result.content}")

            async def guide() -> None:
                await call("context_guide", {})

            for _ in range(30):  # warm up the call path
                await guide()
            queries = [maker.query() for _ in range(recalls)]
            phases: dict[str, Phase] = {
                f"append x{appends}": await paired(
                    appends, lambda n: call("context_append", {"session_id": "bench", "text": maker.entry(n)}), guide
                ),
                f"recall x{recalls} @{appends}": await paired(
                    recalls, lambda n: call("context_recall", {"session_id": "bench", "query": queries[n]}), guide
                ),
                "  same, budget_tokens=500": await paired(
                    recalls,
                    lambda n: call(
                        "context_recall", {"session_id": "bench", "query": queries[n], "budget_tokens": 500}
                    ),
                    guide,
                ),
                f"status x{statuses}": await paired(
                    statuses, lambda n: call("context_status", {"session_id": "bench"}), guide
                ),
            }
    return {name: (*percentiles(samples), percentiles(floors)[0]) for name, (samples, floors) in phases.items()}


async def in_process(entries: int, recalls: int) -> dict[str, tuple[float, float, float]]:
    """Recall through the library at ``entries`` entries in one session."""
    maker = TextMaker(seed=11)
    with tempfile.TemporaryDirectory() as tmp:
        async with open_wiring(Config(data_dir=Path(tmp) / "data", llm_enabled=False, audit=False)) as ctx:
            path = ctx.data.session_journal("scale")
            await ctx.sessions.open("scale", "scale test")
            batch = 500
            for start in range(0, entries, batch):
                records = [
                    NewRecord("entry", {"text": maker.entry(n), "role": "note"}, id_prefix="e")
                    for n in range(start, min(entries, start + batch))
                ]
                await ctx.store.append(path, records)
            await ctx.sessions.status("scale")  # load the session once, as the first call would
            queries = [maker.query() for _ in range(recalls)]
            for query in queries[:10]:
                await ctx.sessions.recall("scale", query)
            recall = await timed(recalls, lambda n: ctx.sessions.recall("scale", queries[n]))
            status = await timed(recalls, lambda n: ctx.sessions.status("scale"))
    return {
        f"in-process recall @{entries}": (*percentiles(recall), math.nan),
        f"in-process status @{entries}": (*percentiles(status), math.nan),
    }


def report(runs: list[dict[str, tuple[float, float, float]]]) -> None:
    for name in runs[0]:
        p50s = [run[name][0] for run in runs]
        p95s = [run[name][1] for run in runs]
        floors = [run[name][2] for run in runs]
        each = " ".join(f"{p50:.2f}" for p50 in p50s)
        line = (
            f"{name:28s} p50 best {min(p50s):6.2f} ms  median {statistics.median(p50s):6.2f} ms  "
            f"p95 best {min(p95s):6.2f} ms  (runs: {each})"
        )
        if not math.isnan(floors[0]):
            line += "  floor (context_guide) p50: " + " ".join(f"{floor:.2f}" for floor in floors)
        print(line)


def fsync_p50(directory: Path) -> float:
    """This disk's write+fsync p50 in ms, right now (other work on the machine moves it a lot)."""
    probe = directory / "fsync-probe"
    samples: list[float] = []
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for _ in range(50):
            started = time.perf_counter()
            os.write(fd, b"x" * 200 + b"\n")
            os.fsync(fd)
            samples.append(time.perf_counter() - started)
    finally:
        os.close(fd)
        probe.unlink()
    return statistics.median(samples) * 1000


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        before = fsync_p50(Path(tmp))
        stdio_runs = [await over_stdio(args.entries, args.recalls, args.statuses) for _ in range(args.runs)]
        scale_runs = [await in_process(args.scale, args.recalls) for _ in range(args.runs)]
        after = fsync_p50(Path(tmp))
    report(stdio_runs)
    report(scale_runs)
    print(f"disk write+fsync p50: {before:.2f} ms before, {after:.2f} ms after")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=1000, help="appends over stdio (default 1000)")
    parser.add_argument("--recalls", type=int, default=100, help="recalls per phase (default 100)")
    parser.add_argument("--statuses", type=int, default=100, help="status calls (default 100)")
    parser.add_argument("--scale", type=int, default=10_000, help="entries for the in-process recall (default 10000)")
    parser.add_argument("--runs", type=int, default=1, help="repeat everything and report best and median (default 1)")
    trio.run(main, parser.parse_args())
