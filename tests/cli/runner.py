"""Running the real ``ctxtrio`` command as a subprocess of a test (this worktree's code)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from testkit.servers import server_params

if TYPE_CHECKING:
    from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@dataclass(frozen=True, slots=True)
class Ran:
    """What one CLI run printed and returned."""

    code: int
    out: str
    err: str

    def json(self) -> Any:  # a test reads what it expects; a wrong shape fails the test
        return json.loads(self.out)


def command(data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "ctxtrio", *args, "--data-dir", str(data), "--no-llm"]


async def cli(data: Path, *args: str, stdin: bytes = b"", timeout_s: float = 60.0) -> Ran:
    """Run ``ctxtrio ARGS --data-dir DATA --no-llm`` to completion (stdin is not a terminal)."""
    with trio.fail_after(timeout_s):
        done = await trio.run_process(
            command(data, *args), stdin=stdin, capture_stdout=True, capture_stderr=True, check=False, cwd=ROOT, env=ENV
        )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


def cli_sync(data: Path, *args: str) -> Ran:
    """The blocking form of :func:`cli`, for tests without a trio loop."""
    done = subprocess.run(
        command(data, *args), capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=60, check=False
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def server(data: Path, *extra: str) -> StdioServerParameters:
    """A real stdio server on ``data`` (to run beside the CLI)."""
    return server_params(data, *extra)
