"""Sessions at scale: listing 2,000 sessions x 200 entries, and 100,000 calls on unknown ids.

    python stress/session_limits.py                        # both, full size
    python stress/session_limits.py --sessions 200 --unknown 10000

1. Listing (issue 11, H4). Sessions are written straight to their journals through the
   store (no summary files exist, as after an upgrade or when another process wrote
   them). A server is started over HTTP; the script times the first
   ``context_list_sessions`` (cold: each session on the page is replayed once, lightly,
   and its summary written), pages through the whole list, restarts the server and
   times the first page again (summaries fresh). It prints each time, the page size in
   tokens against the budget, and the server's RSS before and after.
2. Unknown ids (H5). Through the real tool layer (the SDK's in-memory client over the
   server this process builds), ``context_status`` and ``context_recall`` on made-up
   ids, 8 callers at once; RSS of this process before and after (after a full
   collection), and how many sessions the service holds.

Exits 1 when a must-show of issue 11 fails: the first page over 1 s, more than 100 MB
added, a page over its budget, or memory growing more than 10 MB on unknown ids.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sessions import TextMaker  # noqa: E402
from mcp import Client  # noqa: E402
from scale_sessions import rss_mb, serving  # noqa: E402

from ctxtrio._app import build_server  # noqa: E402
from ctxtrio._config import Config  # noqa: E402
from ctxtrio._wiring import open_wiring  # noqa: E402
from ctxtrio.store.records import NewRecord  # noqa: E402
from ctxtrio.text.tokens import TokenModel  # noqa: E402
from testkit.results import text_of  # noqa: E402

BUDGET_TOKENS = 4000  # the server's default budget without a detected model context


def _load() -> str:
    with open("/proc/loadavg", encoding="ascii") as loadavg:
        return " ".join(loadavg.read().split()[:3])


async def write_sessions(data_dir: Path, sessions: int, entries: int) -> None:
    """``sessions`` journals of ``entries`` entries each, written through the store only."""
    maker = TextMaker(seed=3)
    async with open_wiring(Config(data_dir=data_dir, llm_enabled=False, audit=False)) as ctx:
        for number in range(sessions):
            session_id = f"s{number:05d}"
            records = [NewRecord("session", {"title": f"task {number}"}, id=session_id)]
            records += [
                NewRecord("entry", {"text": maker.entry(n), "role": "note"}, id_prefix="e") for n in range(entries)
            ]
            await ctx.store.append(ctx.data.session_journal(session_id), records)


async def _list_pages(data_dir: Path, walk: bool) -> tuple[float, float, float, int, int, int]:
    """(first page ms, RSS before MB, RSS after MB, pages, sessions seen, largest page tokens)."""
    model = TokenModel.cold()
    async with serving(data_dir) as (process, client):
        await client.call_tool("context_guide", {})
        before = rss_mb(process.pid)
        started = time.perf_counter()
        page = await client.call_tool("context_list_sessions", {})
        first_ms = (time.perf_counter() - started) * 1000
        pages, seen, largest = 1, 0, 0
        while True:
            largest = max(largest, model.estimate(text_of(page)))
            structured = page.structured_content or {}
            listed = structured.get("sessions")
            seen += len(listed) if isinstance(listed, list) else 0
            next_offset = structured.get("next_offset")
            if not walk or not isinstance(next_offset, int):
                break
            page = await client.call_tool("context_list_sessions", {"offset": next_offset})
            pages += 1
        after = rss_mb(process.pid)
    return first_ms, before, after, pages, seen, largest


async def listing(sessions: int, entries: int) -> list[str]:
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="session-limits-") as tmp:
        data_dir = Path(tmp) / "data"
        started = time.perf_counter()
        await write_sessions(data_dir, sessions, entries)
        print(f"wrote {sessions} sessions x {entries} entries in {time.perf_counter() - started:.1f} s")
        for label, walk in (("cold (no summaries)", True), ("restarted (summaries)", False)):
            first_ms, before, after, pages, seen, largest = await _list_pages(data_dir, walk)
            print(
                f"{label:24s} first page {first_ms:7.1f} ms  server RSS {before:.1f} -> {after:.1f} MB "
                f"(+{after - before:.1f})  pages {pages}  sessions seen {seen}  largest page {largest} tokens "
                f"(budget {BUDGET_TOKENS})  load {_load()}"
            )
            if first_ms > 1000:
                failures.append(f"{label}: first page took {first_ms:.0f} ms (> 1 s)")
            if after - before > 100:
                failures.append(f"{label}: +{after - before:.0f} MB (> 100 MB)")
            if largest > BUDGET_TOKENS:
                failures.append(f"{label}: a page of {largest} tokens (> {BUDGET_TOKENS})")
            if walk and seen != sessions:
                failures.append(f"{label}: paging showed {seen} of {sessions} sessions")
    return failures


async def unknown_ids(calls: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="session-unknown-") as tmp:
        config = Config(data_dir=Path(tmp) / "data", llm_enabled=False, audit=False)
        async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
            await client.call_tool("context_append", {"session_id": "real", "text": "one real entry"})
            send, receive = trio.open_memory_channel[int](64)

            async def caller() -> None:
                async with receive.clone() as mine:
                    async for number in mine:
                        tool = "context_status" if number % 2 else "context_recall"
                        result = await client.call_tool(
                            tool,
                            {"session_id": f"made-up-{number}", "query": "x"}
                            if tool == "context_recall"
                            else {"session_id": f"made-up-{number}"},
                        )
                        if not result.is_error:
                            raise RuntimeError(f"{tool} on a made-up id did not fail")

            warmup = min(2000, calls)
            async with trio.open_nursery() as nursery:
                for _ in range(8):
                    nursery.start_soon(caller)
                async with send, receive:
                    for number in range(-warmup, 0):
                        await send.send(number)
            gc.collect()
            before = rss_mb_self()
            started = time.perf_counter()
            send, receive = trio.open_memory_channel[int](64)
            async with trio.open_nursery() as nursery:
                for _ in range(8):
                    nursery.start_soon(caller)
                async with send, receive:
                    for number in range(calls):
                        await send.send(number)
            elapsed = time.perf_counter() - started
            gc.collect()
            after = rss_mb_self()
            held = len(ctx.sessions._registry)
    print(
        f"unknown ids: {calls} calls in {elapsed:.1f} s, RSS {before:.1f} -> {after:.1f} MB "
        f"({after - before:+.1f}), sessions held {held}  load {_load()}"
    )
    failures = []
    if after - before > 10:
        failures.append(f"unknown ids: memory grew {after - before:.1f} MB (> 10 MB)")
    return failures


def rss_mb_self() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def main(args: argparse.Namespace) -> int:
    print(f"load average before: {_load()}")
    failures: list[str] = []
    if args.sessions:
        failures += await listing(args.sessions, args.entries)
    if args.unknown:
        failures += await unknown_ids(args.unknown)
    for failure in failures:
        print(f"FAILED: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=2000, help="sessions to list (default 2000; 0 skips)")
    parser.add_argument("--entries", type=int, default=200, help="entries per session (default 200)")
    parser.add_argument("--unknown", type=int, default=100_000, help="calls on made-up ids (default 100000; 0 skips)")
    raise SystemExit(trio.run(main, parser.parse_args()))
