"""How long a spawned server takes to answer its first ``tools/list``: what a host waits for.

    python stress/first_list.py                      # 5 spawns of this checkout
    python stress/first_list.py --runs 3 --cold      # no bytecode cache either (first start of a fresh install)
    python stress/first_list.py --warm               # one cache dir for all spawns: the warm start can answer
    python stress/first_list.py --python /tmp/venv/bin/python --no-path   # an installed copy
    python stress/first_list.py --tree /tmp/before   # another checkout, the same client

Each spawn gets a fresh data dir and, unless ``--warm``, a fresh ``XDG_CACHE_HOME``
(nothing recorded from an earlier run can help). ``--cold`` also points ``PYTHONPYCACHEPREFIX`` at a fresh empty
folder, so every module of ctxtrio, the SDK and pydantic is compiled from source as on
the very first start after an install without precompiled bytecode (pessimistic: pip
precompiles what it installs into site-packages); without it the checkout is byte-compiled
first, as an install is. The clock starts before the spawn and
stops when the response to ``tools/list`` (sent right after ``initialize``, as hosts do)
has arrived on stdout. Prints one line per spawn and the median, with the load average,
and the server's CPU seconds (user + system, ``/proc``, Linux) up to that answer (without
a warm start, what starting costs: the imports, mostly) and up to the answer to a 100-byte
``doc_ingest`` sent with the list (what a server costs before it can take documents;
with ``--warm`` the list is answered early and only this figure holds the imports).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
from proc_cpu import rss_mb

ROOT = Path(__file__).resolve().parents[1]

_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "first-list", "version": "0"},
    },
}
_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
_INGEST = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "doc_ingest", "arguments": {"doc_id": "first", "text": "first words " * 8}},
}


def one_spawn(
    python: str, *, cold: bool, path: Path | None, cache: Path | None
) -> tuple[float, int, float, float, float]:
    """Seconds from spawn to the tools/list answer, how many tools it listed, the server's CPU seconds then,
    and its CPU seconds and resident MB when the first ``doc_ingest`` (sent with the list) was answered."""
    with tempfile.TemporaryDirectory(prefix="ctxtrio-first-list-") as work:
        env = {**os.environ, "XDG_CACHE_HOME": str(cache or Path(work) / "cache")}
        if path is not None:
            env["PYTHONPATH"] = str(path)
        if cold:
            env["PYTHONPYCACHEPREFIX"] = str(Path(work) / "pycache")
        payload = "".join(json.dumps(m) + "\n" for m in (_INIT, _INITIALIZED, _LIST, _INGEST)).encode()
        started = time.perf_counter()
        process = subprocess.Popen(
            [python, "-m", "ctxtrio", "--no-llm", "--no-audit", "--data-dir", str(Path(work) / "data")],
            cwd=work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(payload)
        process.stdin.flush()
        tools, cpu, ready, elapsed, rss = -1, 0.0, 0.0, 0.0, 0.0
        try:
            deadline = started + 60
            while time.perf_counter() < deadline and not ready:
                line = process.stdout.readline()
                if not line:
                    break
                message = json.loads(line)
                if message.get("id") == 2:
                    tools = len(message["result"]["tools"])
                    cpu = _cpu_seconds(process.pid)
                    elapsed = time.perf_counter() - started
                elif message.get("id") == 3:
                    ready, rss = _cpu_seconds(process.pid), rss_mb(process.pid)
        finally:
            process.stdin.close()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()
        return elapsed, tools, cpu, ready, rss


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (``/proc``; 0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="no bytecode cache (compile everything)")
    parser.add_argument(
        "--warm", action="store_true", help="share one cache dir: spawns after the first may start warm"
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter of the install to measure")
    parser.add_argument("--no-path", dest="path", action="store_false", help="do not put a checkout on PYTHONPATH")
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout put on PYTHONPATH (default: this one)")
    args = parser.parse_args(argv)
    times: list[float] = []
    cpus: list[float] = []
    readies: list[float] = []
    shared = Path(tempfile.mkdtemp(prefix="ctxtrio-first-list-cache-")) if args.warm else None
    if args.path and not args.cold:
        # As pip leaves an install: a module whose bytecode is missing or stale would be
        # compiled at every start (never cached with PYTHONDONTWRITEBYTECODE set).
        compileall.compile_dir(args.tree.resolve() / "ctxtrio", quiet=1)
    for run in range(1, args.runs + 1):
        tree = args.tree.resolve() if args.path else None
        elapsed, tools, cpu, ready, rss = one_spawn(args.python, cold=args.cold, path=tree, cache=shared)
        load = os.getloadavg()[0]
        sys.stdout.write(
            f"spawn {run}: first tools/list after {elapsed:.3f} s ({tools} tools), server CPU {cpu:.2f} s,"
            f" {ready:.2f} s at the first doc_ingest's answer (RSS {rss:.0f} MB), load {load:.2f}\n"
        )
        if tools < 0 or not ready:
            return 1
        times.append(elapsed)
        cpus.append(cpu)
        readies.append(ready)
    mode = "cold (no bytecode)" if args.cold else "bytecode cached"
    mode += ", cache dir shared (warm start possible)" if args.warm else ", fresh cache dir each spawn"
    sys.stdout.write(
        f"median {statistics.median(times):.3f} s, max {max(times):.3f} s over {len(times)} spawns, {mode};"
        f" server CPU median {statistics.median(cpus):.2f} s, {statistics.median(readies):.2f} s at the first doc_ingest\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
