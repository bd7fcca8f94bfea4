"""The real server as a stdio subprocess, driven by the official SDK client."""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio
from mcp import Client
from mcp.types import TextContent

from testkit import servers
from testkit.processes import run_reader_gone, stop_process

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]


def server_params(data_dir: Path, *extra: str) -> StdioServerParameters:
    return servers.server_params(data_dir, *extra, audit=True)


async def test_list_tools_and_call_guide(tmp_path: Path) -> None:
    """An SDK client spawns the server, lists its tools and reads context_guide."""
    with trio.fail_after(60):
        async with Client(server_params(tmp_path / "data")) as client:
            tools = await client.list_tools()
            names = {tool.name for tool in tools.tools}
            assert "context_guide" in names
            result = await client.call_tool("context_guide", {})
            assert not result.is_error
            block = result.content[0]
            assert isinstance(block, TextContent)
            assert "context_recall" in block.text
            assert str(tmp_path / "data") in block.text
            assert "extractive only" in block.text


#: The shutdown grace of the servers whose stop is tested: an hour, so a stop that waits for its grace (a request
#: it thinks is still in flight, a listen left open, a reader it cannot cancel) outlasts :data:`STOP_GUARD_S`, and
#: one that waits for nothing ends well before it, however busy the machine. That the stop waits on no timer at all
#: is pinned on the server's own clock (test_stdio_stop_time.py); its wall-clock time against the 2 s an SDK host
#: allows is measured, not asserted: ``python stress/attack.py stop``.
GRACE = "3600"
#: Only a hang guard (as for a server's start): a stop held by its grace never ends before it.
STOP_GUARD_S = 300


@asynccontextmanager
async def _spawned(data_dir: Path) -> AsyncIterator[trio.Process]:
    """The server on pipes, with an hour of grace; stopped on the way out, so a test that fails leaves no server
    behind."""
    process = await trio.lowlevel.open_process(
        servers.server_command(data_dir, "--shutdown-grace", GRACE, audit=True),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        yield process
    finally:
        await stop_process(process)


async def _wait_ready(process: trio.Process) -> bytes:
    assert process.stderr is not None
    seen = b""
    with trio.fail_after(300):  # only a hang guard: a start beside CPU hogs lost a 60 s one (see serving.read_until)
        while b"ready" not in seen:
            chunk = await process.stderr.receive_some()
            assert chunk, f"server exited early: {seen.decode(errors='replace')}"
            seen += chunk
    return seen


async def test_stdin_eof_exits_zero(tmp_path: Path) -> None:
    """Closing stdin shuts the server down cleanly with exit code 0 and nothing on stdout, without waiting for its
    grace."""
    async with _spawned(tmp_path / "data") as process:
        await _wait_ready(process)
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.aclose()
        with trio.fail_after(STOP_GUARD_S):
            code = await process.wait()
        assert code == 0
        assert await process.stdout.receive_some() == b""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
async def test_a_signal_exits_zero_without_waiting_for_its_grace(tmp_path: Path, signum: signal.Signals) -> None:
    """SIGTERM, or SIGINT (Ctrl-C) by the same graceful path, with stdin still open: exit 0, with nothing in
    flight to wait for (an hour of grace unused)."""
    async with _spawned(tmp_path / "data") as process:
        await _wait_ready(process)
        process.send_signal(signum)
        with trio.fail_after(STOP_GUARD_S):
            code = await process.wait()
        assert code == 0
        assert process.stdin is not None
        await process.stdin.aclose()


def test_a_host_that_stops_reading_stdout_ends_the_server_quietly(tmp_path: Path) -> None:
    """The host closes its end of stdout (it went away, or stopped reading): the first answer fails to be
    written, and the server says so in one warning and exits 0, as at stdin's EOF. It ended in an exception
    group's traceback through the whole component tree, exit 1."""
    lines = b"".join(
        (
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}\n',
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
        )
    )
    done = run_reader_gone(servers.server_command(tmp_path / "data"), input=lines)  # nobody reads the answers
    log = done.stderr.decode(errors="replace")
    assert done.returncode == 0 and "Traceback" not in log, log[-3000:]
    assert "stdout cannot be written" in log, log[-3000:]
