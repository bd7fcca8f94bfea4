"""Shared by the stress scripts: start the real server over HTTP on 127.0.0.1:0."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
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
