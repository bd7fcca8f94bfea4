"""The README's quick start on a machine with no model server: no warning, and it says where state goes."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import trio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_quick_start_without_a_model_server_prints_no_warning(tmp_path: Path) -> None:
    """`ctxtrio --ingest-root ./` (LLM on, nothing listening): INFO lines only, one about the model server.

    Retries stay quiet too: tests/llm/test_calibration_endpoint.py follows them under a mock clock.
    """
    env = {
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "share"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "CTX_LLM_BASE_URL": f"http://127.0.0.1:{_closed_port()}/v1",  # the default 1234 may be in use here
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ctxtrio", "--ingest-root", "./"], cwd=tmp_path, env=env
    )
    log_path = tmp_path / "stderr.log"
    with open(log_path, "w") as errlog, trio.fail_after(60):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            assert len((await client.list_tools()).tools) == 15
            while "no model server answers" not in log_path.read_text():
                await trio.sleep(0.1)
    lines = log_path.read_text().splitlines()
    assert [line for line in lines if not line.startswith("ctxtrio INFO ")] == [], lines
    assert sum("no model server answers" in line for line in lines) == 1, lines
    assert any(f"data dir {tmp_path / 'share' / 'ctxtrio'}" in line for line in lines), lines
