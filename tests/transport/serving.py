"""Helpers to run the real server as a subprocess for end-to-end tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from testkit.processes import stop_process

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

ROOT = Path(__file__).resolve().parents[2]
_READY = re.compile(rb"ready: MCP over HTTP at (http://[^\s,]+)/mcp")


@dataclass
class RunningServer:
    process: trio.Process
    base_url: str
    stderr: bytearray

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"


async def spawn(*args: str, env: dict[str, str] | None = None) -> trio.Process:
    """Start ``python -m ctxtrio ARGS`` with pipes on all three streams."""
    return await trio.lowlevel.open_process(
        [sys.executable, "-m", "ctxtrio", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


async def read_until(process: trio.Process, pattern: re.Pattern[bytes], seen: bytearray) -> re.Match[bytes]:
    """Read stderr into ``seen`` until ``pattern`` matches (300 s at most: only a hang guard, as a server's start
    took 31-38 s of wall time on a busy two-core machine, and 60 s was lost beside CPU hogs)."""
    assert process.stderr is not None
    with trio.fail_after(300):
        while (match := pattern.search(seen)) is None:
            chunk = await process.stderr.receive_some()
            assert chunk, f"server exited early: {seen.decode(errors='replace')}"
            seen += chunk
    return match


@asynccontextmanager
async def http_server(
    data_dir: Path, *extra: str, env: dict[str, str] | None = None, llm: bool = False
) -> AsyncIterator[RunningServer]:
    """A server on 127.0.0.1 with a free port (no LLM unless ``llm``); SIGTERM and wait on exit.

    Its stderr is read into ``RunningServer.stderr`` all along: a pipe nobody reads fills
    at 64 KiB, and the server's next log line then blocks its event loop (a test that
    provokes hundreds of logged 408s froze the server that way).
    """
    flags = () if llm else ("--no-llm",)
    process = await spawn("--http", "--port", "0", "--data-dir", str(data_dir), *flags, *extra, env=env)
    seen = bytearray()
    try:
        match = await read_until(process, _READY, seen)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(drain_stderr, process, seen)
            yield RunningServer(process, match.group(1).decode(), seen)
            nursery.cancel_scope.cancel()
    finally:
        await stop_process(process)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                await stream.aclose()


async def drain_stderr(process: trio.Process, seen: bytearray) -> None:
    """Read the process's stderr into ``seen`` until it closes."""
    assert process.stderr is not None
    while chunk := await process.stderr.receive_some():
        seen += chunk
