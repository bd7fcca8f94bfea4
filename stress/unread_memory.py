"""Server memory against clients that take and never give back (issue 27, finding 8).

    python stress/unread_memory.py stdio --requests 100000
    python stress/unread_memory.py http --sessions 10000 --cap 1000

``stdio``: a client sends ``--requests`` ``context_guide`` calls (answers of a few KB)
and never reads stdout. The server stops reading once 64 answers are owed, so the
client's writes block; the script reports how many requests the server took and its
peak RSS (``/proc/PID/status`` VmHWM) against its RSS after startup, then reads every
answer it is owed.

``http``: ``--sessions`` clients each open a Streamable HTTP session (initialize +
initialized) and leave it idle; the server runs with ``--http-max-sessions CAP``. The
script reports the server's RSS before and after, and how many sessions still answer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
from harness import start_http_server, stop_server  # noqa: E402

from testkit import unread  # noqa: E402

INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "stress", "version": "1"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """A process's resident set (or its peak, ``VmHWM``) in MB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def stdio_unread(work: Path, requests: int, quiet_s: float = 5.0) -> tuple[int, float, float, float, int]:
    """(requests taken while unread, RSS after start MB, peak RSS MB, RSS when stalled MB, answers read after)."""
    process = unread.start(work / "stdio-data")
    assert process.stdin is not None and process.stdout is not None
    try:
        unread.initialized(process, "stress")
        started = rss_mb(process.pid)
        payload = unread.guide_calls(requests)
        sent = unread.write_until_stalled(process, payload, quiet_s=quiet_s, chunk=65536)
        taken = payload[:sent].count(b"\n")
        stalled, peak = rss_mb(process.pid), rss_mb(process.pid, "VmHWM")
        answers = unread.finish(process, payload[sent:])
        peak = max(peak, rss_mb(process.pid, "VmHWM")) if process.poll() is None else peak
        process.wait(timeout=120)
        return taken, started, peak, stalled, len(answers)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()


async def http_idle(work: Path, sessions: int, cap: int) -> tuple[float, float, int, int]:
    """(RSS after start MB, RSS after every session opened MB, newest sessions answering of 100, sessions refused)."""
    process, url = await start_http_server(work / "http-data", "--http-max-sessions", str(cap))
    try:
        assert process.stderr is not None

        async def drain() -> None:
            while await process.stderr.receive_some():  # type: ignore[union-attr]
                pass

        async with trio.open_nursery() as nursery, httpx.AsyncClient(timeout=30) as http:
            nursery.start_soon(drain)
            before = rss_mb(process.pid)
            opened: list[str] = []
            refused = 0
            for _ in range(sessions):
                answer = await http.post(url, headers=HEADERS, content=json.dumps(INIT))
                if answer.status_code != 200:
                    refused += 1
                    continue
                session = answer.headers["mcp-session-id"]
                await http.post(
                    url,
                    headers={**HEADERS, "mcp-session-id": session},
                    content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                )
                opened.append(session)
            after = rss_mb(process.pid)
            alive = 0
            for session in opened[-100:]:
                ping = await http.post(
                    url,
                    headers={**HEADERS, "mcp-session-id": session},
                    content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                )
                alive += ping.status_code == 200
            nursery.cancel_scope.cancel()
        return before, after, alive, refused
    finally:
        await stop_server(process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["stdio", "http"])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--cap", type=int, default=1000)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="ctxtrio-unread-") as work:
        if args.what == "stdio":
            taken, started, peak, stalled, answered = stdio_unread(Path(work), args.requests)
            print(
                f"stdio: {args.requests:,} requests offered unread: server took {taken:,}; RSS {started:.0f} MB after start, "
                f"{stalled:.0f} MB stalled, peak {peak:.0f} MB; then {answered:,} answers read (load {load:.1f})"
            )
            return 0 if answered == args.requests else 1
        before, after, alive, refused = trio.run(http_idle, Path(work), args.sessions, args.cap)
        print(
            f"http: {args.sessions:,} idle sessions, cap {args.cap:,}: RSS {before:.0f} -> {after:.0f} MB; "
            f"{alive} of the newest 100 answer; {refused} refused (load {load:.1f})"
        )
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
