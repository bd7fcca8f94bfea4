"""The container's healthcheck reads the server's flags or variables and its token from /proc, then asks /health."""

from __future__ import annotations

import os
import re
import socket
import sys
from typing import TYPE_CHECKING

import pytest
import trio

from ctxtrio.cli.healthcheck import check, listening_port, main, server_process
from tests.transport.serving import read_until, spawn

from .runner import ENV, ROOT

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

TOKEN = "a-token-of-sixteen-plus"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _healthcheck(pid: int) -> subprocess.CompletedProcess[bytes]:
    return await trio.run_process(
        # --timeout: a hang guard; the default 4 s is a real-time limit a loaded CI core can miss
        [sys.executable, "-m", "ctxtrio.cli.healthcheck", str(pid), "--timeout", "120"],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        cwd=ROOT,
        env=ENV,
    )


async def _serving(data: Path, *flags: str, env: dict[str, str] | None = None) -> tuple[trio.Process, bytearray]:
    process = await spawn("--data-dir", str(data), "--no-llm", *flags, env=env)
    seen = bytearray()
    await read_until(process, re.compile(rb"ready: MCP over"), seen)
    return process, seen


async def _stop(process: trio.Process) -> None:
    process.terminate()
    with trio.fail_after(30):
        await process.wait()


async def test_http_settings_given_as_flags_with_a_token(tmp_path: Path) -> None:
    """--http --port N --http-token T as flags: healthy; the same server stopped: unhealthy, one line."""
    port = _free_port()
    process, _ = await _serving(tmp_path / "data", "--http", "--port", str(port), "--http-token", TOKEN)
    try:
        healthy = await _healthcheck(process.pid)
        assert healthy.returncode == 0, healthy.stderr.decode()
    finally:
        await _stop(process)
    gone = await _healthcheck(process.pid)
    assert gone.returncode == 1 and gone.stderr.decode().startswith("unhealthy: ")


async def test_http_settings_given_as_variables(tmp_path: Path) -> None:
    """CTX_TRANSPORT=http, CTX_HTTP_PORT and CTX_HTTP_TOKEN in the server's environment: healthy."""
    port = _free_port()
    env = {"CTX_TRANSPORT": "http", "CTX_HTTP_PORT": str(port), "CTX_HTTP_TOKEN": TOKEN}
    process, _ = await _serving(tmp_path / "data", env=env)
    try:
        healthy = await _healthcheck(process.pid)
        assert healthy.returncode == 0, healthy.stderr.decode()
    finally:
        await _stop(process)


async def test_a_server_on_any_free_port_is_asked_on_the_port_it_got(tmp_path: Path) -> None:
    """--http --port 0: the check asks /health on the port the server listens on, not on port 0."""
    process, seen = await _serving(tmp_path / "data", "--http", "--port", "0")
    try:
        healthy = await _healthcheck(process.pid)
        assert healthy.returncode == 0, healthy.stderr.decode()
        bound = re.search(rb"MCP over HTTP at http://127\.0\.0\.1:(\d+)/mcp", seen)
        assert bound is not None and listening_port(process.pid) == int(bound[1])
    finally:
        await _stop(process)
    gone = await _healthcheck(process.pid)
    assert gone.returncode == 1 and gone.stderr.decode().startswith("unhealthy: ")


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
async def test_a_server_on_the_ipv6_loopback_is_asked_with_its_address_bracketed(tmp_path: Path) -> None:
    """--http --host ::1: the check asks http://[::1]:PORT/health, not "::1:PORT" (refused by the Host check)."""
    with socket.socket(socket.AF_INET6) as probe:
        probe.bind(("::1", 0))
        port = int(probe.getsockname()[1])
    process, _ = await _serving(tmp_path / "data", "--http", "--host", "::1", "--port", str(port))
    try:
        healthy = await _healthcheck(process.pid)
        assert healthy.returncode == 0, healthy.stderr.decode()
    finally:
        await _stop(process)


def test_the_server_is_the_oldest_ctxtrio_without_a_command(tmp_path: Path) -> None:
    """In a /proc with an init, a `ctxtrio ingest` and the server, the server's pid is found."""
    for pid, words in (
        (1, [b"/sbin/docker-init", b"--", b"sh"]),
        (7, [b"/usr/bin/python", b"/usr/bin/ctxtrio", b"ingest", b"/x"]),
        (9, [b"python", b"-m", b"ctxtrio", b"--http"]),
        (12, [b"python", b"-m", b"ctxtrio", b"--stdio"]),
    ):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(b"\0".join(words) + b"\0")
    assert server_process(tmp_path) == 9


def test_a_server_using_relative_paths_from_its_own_directory_is_healthy_to_a_check_run_from_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check reads a server's settings, not whether it may start where the check runs: a stdio server started
    with '--data-dir state' from a directory of its own is healthy to a check run from / (it was unhealthy,
    'cannot read the server's settings: --data-dir 'state' is a relative path and the working directory is /',
    since serving from / refuses such paths, 640e662). Its /proc entry as proc(5) lays it out: cmdline and
    environ, NUL-terminated strings."""
    (tmp_path / "4242").mkdir()
    (tmp_path / "4242" / "cmdline").write_bytes(
        b"\0".join([b"python", b"-m", b"ctxtrio", b"--data-dir", b"state"]) + b"\0"
    )
    (tmp_path / "4242" / "environ").write_bytes(b"HOME=/home/ctx\0")
    monkeypatch.chdir("/")
    assert check(4242, tmp_path) is None


@pytest.mark.parametrize("timeout", ["-1", "nan", "0", "inf"])
def test_a_timeout_that_is_no_positive_number_of_seconds_is_refused(
    timeout: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--timeout -1 or nan reached urlopen (a ValueError traceback), 0 called a healthy server unhealthy ("Operation
    now in progress"): argparse refuses them, exit 2, before any server is looked for."""
    with pytest.raises(SystemExit) as stopped:
        main([str(os.getpid()), "--timeout", timeout])
    assert stopped.value.code == 2
    assert f"must be seconds > 0, got {timeout}" in capsys.readouterr().err
