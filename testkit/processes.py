"""Stopping a server process the one way tests and stress scripts agree on, reading a helper
process's ready line, and running a child whose stdout nobody reads any more.

SIGTERM first (the server's graceful path: answer what is in flight, drain the store),
then SIGKILL once ``grace_s`` has passed. :func:`stop_process` is for ``trio.Process``
(shielded, so a test that is being cancelled still reaps its child), :func:`stop_popen`
for ``subprocess.Popen`` in plain blocking scripts.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import IO

import trio

__all__ = ["read_line", "run_reader_gone", "stop_popen", "stop_process"]

_ROOT = Path(__file__).resolve().parents[1]


async def stop_process(process: trio.Process, *, grace_s: float = 10.0) -> None:
    """SIGTERM, up to ``grace_s`` to exit, then SIGKILL; wait for it. Shielded from outside cancellation."""
    with trio.CancelScope(shield=True):
        if process.returncode is None:
            process.terminate()
            with trio.move_on_after(grace_s):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


async def read_line(stream: trio.abc.ReceiveStream, *, timeout_s: float = 30.0) -> bytes:
    """What ``stream`` (a child's stdout) sends up to its first newline, which a helper process writes
    once it holds what it was started to hold; TooSlowError after ``timeout_s``, EOFError if it closes first."""
    said = b""
    with trio.fail_after(timeout_s):
        while not said.endswith(b"\n"):
            more = await stream.receive_some()
            if not more:
                raise EOFError(f"the process closed its output before a line: {said!r}")
            said += more
    return said


def stop_popen(process: subprocess.Popen[bytes] | subprocess.Popen[str], *, grace_s: float = 10.0) -> None:
    """The blocking twin of :func:`stop_process`."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_reader_gone(
    command: list[str], *, stdin: IO[bytes] | None = None, input: bytes | None = None, timeout_s: float = 60.0
) -> subprocess.CompletedProcess[bytes]:
    """Run ``command`` (from the repository root, this checkout's ``ctxtrio`` importable) with a stdout
    whose reader closed before the child wrote a byte: a host that went away, or a server killed while its
    chunking child works. Its stderr is captured; it gets ``stdin`` (a file) or ``input`` (bytes)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            command,
            stdin=stdin,
            input=input,
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=_ROOT,
            env={**os.environ, "PYTHONPATH": str(_ROOT)},
            timeout=timeout_s,
            check=False,
        )
    finally:
        os.close(write)
