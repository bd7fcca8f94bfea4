"""stdio backpressure: a client that stops reading answers makes the server stop reading requests."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OFFERED = 3000


def _request(number: int) -> bytes:
    return (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": number,
                "method": "tools/call",
                "params": {"name": "context_guide", "arguments": {}},
            }
        )
        + "\n"
    ).encode()


def test_a_client_that_does_not_read_answers_is_not_read_from_past_a_bound(tmp_path: Path) -> None:
    """3,000 context_guide calls with stdout unread: the server stops taking requests after the
    unanswered limit plus the pipe and its read buffer (~1,200 here; before: all 3,000, every answer
    held in memory), and answers every request once the client reads."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctxtrio",
            "--data-dir",
            str(tmp_path / "data"),
            "--no-llm",
            "--no-audit",
            "--no-warm-start",
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        init = {
            "jsonrpc": "2.0",
            "id": "init",
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        process.stdin.write((json.dumps(init) + "\n").encode())
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        process.stdin.flush()
        assert b'"init"' in process.stdout.readline()
        fd = process.stdin.fileno()
        os.set_blocking(fd, False)
        payload = b"".join(_request(n) for n in range(OFFERED))
        sent = 0
        quiet_since = time.monotonic()
        while sent < len(payload) and time.monotonic() - quiet_since < 3.0:
            select.select([], [fd], [], 0.2)
            try:
                written = os.write(fd, payload[sent : sent + 4096])
            except BlockingIOError:
                continue
            sent += written
            quiet_since = time.monotonic()
        taken = payload[:sent].count(b"\n")
        assert taken < OFFERED // 2, f"the server took {taken} of {OFFERED} requests while its answers went unread"
        answers: list[bytes] = []
        reader = threading.Thread(target=lambda: answers.extend(iter(process.stdout.readline, b"")))  # type: ignore[union-attr]
        reader.start()
        os.set_blocking(fd, True)
        process.stdin.write(payload[sent:])
        process.stdin.close()
        reader.join(timeout=120)
        assert len(answers) == OFFERED
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        if not process.stdin.closed:
            process.stdin.close()
