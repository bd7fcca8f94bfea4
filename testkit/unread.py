"""A stdio client that writes requests and leaves the answers unread, then reads them all.

What ``tests/transport/test_stdio_backpressure.py`` checks and ``stress/unread_memory.py``
measures: raw JSON-RPC lines over a ``subprocess.Popen`` (the SDK client always reads),
written without blocking until the server stops taking them.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
import time
from typing import TYPE_CHECKING

from .servers import ROOT, server_command

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["finish", "guide_calls", "initialized", "start", "write_until_stalled"]


def start(data: Path) -> subprocess.Popen[bytes]:
    """A server on ``data`` with pipes for stdin and stdout (stderr discarded), no warm start."""
    return subprocess.Popen(
        server_command(data, "--no-warm-start"),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def initialized(process: subprocess.Popen[bytes], client: str) -> bytes:
    """Send initialize (id "init", revision 2025-06-18) and notifications/initialized; the answer's line."""
    assert process.stdin is not None and process.stdout is not None
    init = {
        "jsonrpc": "2.0",
        "id": "init",
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": client, "version": "1"}},
    }
    process.stdin.write((json.dumps(init) + "\n").encode())
    process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    process.stdin.flush()
    return process.stdout.readline()


def guide_calls(count: int) -> bytes:
    """``count`` context_guide calls, ids 0 to ``count - 1``, one line each."""
    call = {"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "context_guide", "arguments": {}}}
    return b"".join((json.dumps({**call, "id": n}) + "\n").encode() for n in range(count))


def write_until_stalled(process: subprocess.Popen[bytes], payload: bytes, *, quiet_s: float, chunk: int) -> int:
    """Write ``payload`` to stdin without blocking, ``chunk`` bytes at a time, until it is all sent or no
    write went through for ``quiet_s``; the bytes sent. Leaves stdin non-blocking."""
    assert process.stdin is not None
    fd = process.stdin.fileno()
    os.set_blocking(fd, False)
    sent, quiet_since = 0, time.monotonic()
    while sent < len(payload) and time.monotonic() - quiet_since < quiet_s:
        select.select([], [fd], [], 0.2)
        try:
            sent += os.write(fd, payload[sent : sent + chunk])
        except BlockingIOError:
            continue
        quiet_since = time.monotonic()
    return sent


def finish(process: subprocess.Popen[bytes], rest: bytes, *, timeout_s: float | None = None) -> list[bytes]:
    """Read every answer (in a thread) while writing ``rest`` and closing stdin; the lines read."""
    assert process.stdin is not None and process.stdout is not None
    stdout = process.stdout
    answers: list[bytes] = []
    reader = threading.Thread(target=lambda: answers.extend(iter(stdout.readline, b"")))
    reader.start()
    os.set_blocking(process.stdin.fileno(), True)
    process.stdin.write(rest)
    process.stdin.close()
    reader.join(timeout=timeout_s)
    return answers
