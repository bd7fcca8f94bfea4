"""Shared by the stress scripts: start the real server over HTTP on 127.0.0.1:0 (or on a fixed port, again and again)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import httpx
import trio

ROOT = Path(__file__).resolve().parents[1]

from testkit.processes import stop_process  # noqa: E402

_READY = re.compile(rb"ready: MCP over HTTP at (http://[^\s,]+)/mcp")


async def start_http_server(data_dir: Path, *extra: str) -> tuple[trio.Process, str]:
    """Start ``ctxtrio --http --port 0`` (no LLM, no audit); return it and its MCP URL.

    The caller owns the process (and its stderr pipe, which it must drain or close).
    """
    process = await trio.lowlevel.open_process(
        [
            sys.executable,
            "-m",
            "ctxtrio",
            "--http",
            "--port",
            "0",
            "--data-dir",
            str(data_dir),
            "--no-llm",
            "--no-audit",
            *extra,
        ],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stderr is not None
    seen = b""
    with trio.fail_after(60):
        while (match := _READY.search(seen)) is None:
            chunk = await process.stderr.receive_some()
            if not chunk:
                raise RuntimeError(f"server exited: {seen.decode(errors='replace')}")
            seen += chunk
    return process, match.group(1).decode() + "/mcp"


async def stop_server(process: trio.Process) -> None:
    """Stop it as tests do (:func:`testkit.processes.stop_process`: SIGTERM, 10 s, SIGKILL); close its stderr pipe."""
    await stop_process(process)
    if process.stderr is not None:
        await process.stderr.aclose()


class Server:
    """``ctxtrio --http`` on a fixed port (no LLM, no audit, ``extra`` flags), startable again, so clients
    find it at the same URL after a restart; its stdout and stderr appended to ``log``."""

    def __init__(self, data: Path, port: int, log: Path, *extra: str) -> None:
        self.port, self.log = port, log
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.command = [
            sys.executable, "-m", "ctxtrio", "--http", "--port", str(port), "--data-dir", str(data),
            "--no-llm", "--no-audit", *extra,
        ]  # fmt: skip
        self.process: trio.Process | None = None

    async def start(self) -> float:
        """Start it; seconds until ``/health`` answered."""
        started = time.time()
        with self.log.open("ab") as log:
            self.process = await trio.lowlevel.open_process(
                self.command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )  # fmt: skip
        with trio.fail_after(120):
            await healthy(self.port)
        return time.time() - started

    async def stop(self, sig: int) -> str:
        """Send ``sig``; how it ended and how long that took."""
        assert self.process is not None
        started = time.time()
        self.process.send_signal(sig)
        with trio.move_on_after(30):
            await self.process.wait()
        return f"exit {self.process.returncode} after {time.time() - started:.1f} s"

    def rss_bytes(self) -> int:
        if self.process is None or self.process.returncode is not None:
            return 0
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0


async def healthy(port: int) -> None:
    """Until ``GET /health`` answers 200."""
    async with httpx.AsyncClient() as http:
        while True:
            try:
                if (await http.get(f"http://127.0.0.1:{port}/health", timeout=2)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await trio.sleep(0.3)
