"""The stdio server's stop, on the wall clock and at the edge of stdin's EOF.

* How long an idle server takes to exit after stdin's EOF, SIGTERM and SIGINT, against what a host built on
  the MCP Python SDK allows (``mcp/client/stdio.py``: ``PROCESS_TERMINATION_TIMEOUT = 2.0`` after closing
  stdin, then SIGTERM and ``FORCE_KILL_TIMEOUT = 2.0`` before SIGKILL). The tests pin that the stop waits on
  no timer (tests/transport/test_stdio_stop_time.py); what is left is the machine's speed, measured here.
* Requests written together with EOF (the host writes them and closes stdin at once): each is answered as
  one asked before the stop: tool calls, resources, prompts, and a 2026-07-28 ``subscriptions/listen`` with
  its result (it was refused -32603 when its handler started after the stop); ``initialize`` and
  ``tools/list`` with their answers (which the warm start records on the way out). The order that lost is
  forced in-process by tests/transport/test_stdio_stop_order.py; here it is left to the scheduler.

Each spawn is ``python -m ctxtrio`` on a fresh data dir with its own warm-start cache, 60 s at most.
"""

from __future__ import annotations

import json
import os
import select
import signal
import statistics
import subprocess
import time
from pathlib import Path

from testkit.servers import server_command
from testkit.stdio_lines import line, modern_request

from . import Row

ROOT = Path(__file__).resolve().parents[2]

#: What a host built on the SDK waits, after closing stdin and again after SIGTERM, before escalating.
HOST_WAIT_S = 2.0
STARTS = 3


def _env(work: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(work / "cache")}


def _until_ready(process: subprocess.Popen[bytes], limit_s: float = 60.0) -> None:
    assert process.stderr is not None
    seen, deadline = b"", time.monotonic() + limit_s
    while b"ready: MCP over stdio" not in seen:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([process.stderr], [], [], left)[0]:
            raise TimeoutError(f"no ready line in {limit_s:g} s")
        chunk = os.read(process.stderr.fileno(), 65536)
        if not chunk:
            raise RuntimeError(f"server exited: {seen.decode(errors='replace')[-500:]}")
        seen += chunk


def _stop_once(work: Path, name: str, how: str) -> tuple[int, float]:
    """Exit code and seconds from the stop (``eof``, ``SIGTERM`` or ``SIGINT``) to the exit of an idle server."""
    process = subprocess.Popen(
        server_command(work / name),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=_env(work),
    )
    try:
        _until_ready(process)
        assert process.stdin is not None
        started = time.perf_counter()
        if how == "eof":
            process.stdin.close()
        else:
            process.send_signal(getattr(signal, how))
        code = process.wait(timeout=60)
        return code, time.perf_counter() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pipe in (process.stdin, process.stderr):
            if pipe is not None:
                pipe.close()


def idle_stop(work: Path, how: str) -> Row:
    runs = [_stop_once(work, f"stop-{how}-{i}", how) for i in range(STARTS)]
    seconds = [s for _, s in runs]
    codes = sorted({code for code, _ in runs})
    cause = "stdin closed" if how == "eof" else how
    return Row(
        f"{cause}, nothing in flight ({STARTS} starts)",
        f"exit 0 within {HOST_WAIT_S:g} s each (what an SDK host waits before escalating)",
        f"exit {codes}, {statistics.median(seconds):.2f} s median, {max(seconds):.2f} s max",
        codes == [0] and max(seconds) < HOST_WAIT_S,
    )


def _fed(work: Path, name: str, lines: list[bytes]) -> tuple[int, list[dict[str, object]], str]:
    """Exit code, answers and stderr of one spawn fed ``lines`` and EOF in one write."""
    done = subprocess.run(
        server_command(work / name),
        input=b"".join(lines),
        capture_output=True,
        cwd=ROOT,
        env=_env(work),
        timeout=60,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, answers, done.stderr.decode(errors="replace")


def _by_id(answers: list[dict[str, object]], request_id: int) -> dict[str, object] | None:
    return next((message for message in answers if message.get("id") == request_id), None)


def _request(request_id: int, method: str, params: dict[str, object] | None = None) -> bytes:
    return modern_request(request_id, method, params, client="attack")


_AT_EOF = [
    _request(1, "server/discover"),
    _request(2, "tools/call", {"name": "context_append", "arguments": {"session_id": "s", "text": "Decision: X"}}),
    _request(3, "tools/call", {"name": "doc_search", "arguments": {"query": "decision"}}),
    _request(4, "tools/list"),
    _request(5, "resources/read", {"uri": "ctxtrio://guide"}),
    _request(6, "resources/list"),
    _request(7, "prompts/list"),
    _request(8, "subscriptions/listen", {"notifications": {"resourcesListChanged": True}}),
]


def requests_at_eof(work: Path) -> Row:
    whole, seen = 0, []
    for i in range(STARTS):
        code, answers, log = _fed(work, f"at-eof-{i}", _AT_EOF)
        results = {n: (_by_id(answers, n) or {}).get("result") for n in range(1, 9)}
        missing = [n for n, result in results.items() if not isinstance(result, dict)]
        failed = [n for n in (2, 3) if isinstance(result := results[n], dict) and result.get("isError")]
        if code == 0 and not missing and not failed and "Traceback" not in log:
            whole += 1
        else:
            seen.append(f"exit {code}, no result for {missing}, tool errors {failed}")
    return Row(
        f"2026-07-28 discover, a write and a read tool call, tools/list, resources/read and /list, prompts/list "
        f"and subscriptions/listen, with EOF in one write ({STARTS} starts)",
        "each answered with its result (the listen acknowledged and ended), exit 0",
        f"{whole} of {STARTS} answered all eight" + (f"; {'; '.join(seen)}" if seen else ""),
        whole == STARTS,
    )


def handshake_at_eof(work: Path) -> Row:
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "attack", "version": "0"}}
    lines = [
        line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
        line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ]
    answered = 0
    for i in range(STARTS):
        code, answers, log = _fed(work, f"handshake-{i}", lines)
        tools = _by_id(answers, 2)
        result = tools.get("result") if tools is not None else None
        if code == 0 and _by_id(answers, 1) is not None and isinstance(result, dict) and result.get("tools"):
            answered += 1 if "Traceback" not in log else 0
    return Row(
        f"initialize, initialized, tools/list and EOF in one write ({STARTS} starts, the first records its answers)",
        "both answered each time, exit 0",
        f"{answered} of {STARTS} answered both",
        answered == STARTS,
    )


def run(work: Path) -> list[Row]:
    return [
        idle_stop(work, "eof"),
        idle_stop(work, "SIGTERM"),
        idle_stop(work, "SIGINT"),
        requests_at_eof(work),
        handshake_at_eof(work),
    ]
