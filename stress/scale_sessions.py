"""Session growth curve: first and warm context_recall, context_list_sessions, and server RSS by size.

    python stress/scale_sessions.py                   # 1k, 10k, 100k entries
    python stress/scale_sessions.py 1000 10000        # chosen sizes

For each size, one session of that many entries is written (deterministic texts from
``bench_sessions.TextMaker``) and loaded once by the library, as the process that wrote
it would have (that load writes the session's snapshot, like a long-running server
does every 512 KB). Then a fresh server is started over HTTP (``harness``) and, with
the official SDK client, the script times the first ``context_recall`` (the session is
not in memory yet: snapshot load plus catch-up), the median of 20 warm recalls, and
one ``context_list_sessions``; ``rss_mb`` is the server's VmRSS after all of that.

:func:`measure_sessions` is what ``stress/scale.py`` imports. It runs its own
``trio.run``: from async code, call it through ``trio.to_thread.run_sync``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from typing import TYPE_CHECKING  # noqa: E402

from bench_sessions import TextMaker  # noqa: E402
from harness import start_http_server, stop_server  # noqa: E402
from mcp import Client  # noqa: E402

from ctxtrio._config import Config  # noqa: E402
from ctxtrio._wiring import open_wiring  # noqa: E402
from ctxtrio.store.records import NewRecord  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["build_session", "measure_sessions", "rss_mb", "serving"]

SESSION = "scale"
WARM_CALLS = 20
_BATCH = 1000


def rss_mb(pid: int) -> float:
    """Resident set size of process ``pid`` in MB (Linux /proc)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def build_session(data_dir: Path, entries: int, session_id: str = SESSION) -> None:
    """Write a session of ``entries`` entries through the store, then load it once (writing its snapshot)."""
    maker = TextMaker(seed=11)
    config = Config(data_dir=data_dir, llm_enabled=False, audit=False)
    async with open_wiring(config) as ctx:
        await ctx.sessions.open(session_id, "scale test")
        path = ctx.data.session_journal(session_id)
        for start in range(0, entries, _BATCH):
            records = [
                NewRecord("entry", {"text": maker.entry(n), "role": "note"}, id_prefix="e")
                for n in range(start, min(entries, start + _BATCH))
            ]
            await ctx.store.append(path, records)
        await ctx.sessions.status(session_id)


@asynccontextmanager
async def serving(data_dir: Path) -> AsyncIterator[tuple[trio.Process, Client]]:
    """A server on ``data_dir`` over HTTP (its stderr drained) and an SDK client of it; stopped after."""
    process, url = await start_http_server(data_dir)
    try:
        async with trio.open_nursery() as nursery:
            assert process.stderr is not None
            stderr = process.stderr

            async def drain() -> None:
                while await stderr.receive_some():
                    pass

            nursery.start_soon(drain)
            async with Client(url) as client:
                yield process, client
            nursery.cancel_scope.cancel()
    finally:
        await stop_server(process)


async def _measure_one(entries: int) -> dict[str, float]:
    maker = TextMaker(seed=5)
    queries = [maker.query() for _ in range(WARM_CALLS + 1)]
    with tempfile.TemporaryDirectory(prefix="scale-sessions-") as tmp:
        data_dir = Path(tmp) / "data"
        await build_session(data_dir, entries)
        async with serving(data_dir) as (process, client):
            await client.call_tool("context_guide", {})  # the round trip is warm; the session is not
            started = time.perf_counter()
            first = await client.call_tool("context_recall", {"session_id": SESSION, "query": queries[0]})
            first_ms = (time.perf_counter() - started) * 1000
            if first.is_error:
                raise RuntimeError(f"context_recall failed: {first.content}")
            warm: list[float] = []
            for query in queries[1:]:
                started = time.perf_counter()
                await client.call_tool("context_recall", {"session_id": SESSION, "query": query})
                warm.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await client.call_tool("context_list_sessions", {})
            list_ms = (time.perf_counter() - started) * 1000
            rss = rss_mb(process.pid)
    return {
        "entries": float(entries),
        "first_recall_ms": first_ms,
        "warm_recall_ms": statistics.median(warm),
        "list_sessions_ms": list_ms,
        "rss_mb": rss,
    }


def measure_sessions(sizes: list[int]) -> list[dict[str, float]]:
    """One row per size: entries, first_recall_ms, warm_recall_ms, list_sessions_ms, rss_mb."""

    async def run() -> list[dict[str, float]]:
        return [await _measure_one(size) for size in sizes]

    return trio.run(run)


def _load() -> str:
    with open("/proc/loadavg", encoding="ascii") as loadavg:
        return " ".join(loadavg.read().split()[:3])


def main(argv: list[str]) -> int:
    sizes = [int(arg) for arg in argv] or [1_000, 10_000, 100_000]
    print(f"load average before: {_load()}")
    rows = measure_sessions(sizes)
    print(f"{'entries':>8} {'first recall ms':>16} {'warm recall ms':>15} {'list ms':>8} {'server RSS MB':>14}")
    for row in rows:
        print(
            f"{row['entries']:8.0f} {row['first_recall_ms']:16.1f} {row['warm_recall_ms']:15.2f} "
            f"{row['list_sessions_ms']:8.1f} {row['rss_mb']:14.1f}"
        )
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
