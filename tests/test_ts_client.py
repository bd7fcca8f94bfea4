"""The TypeScript SDK v2 client validates every tool's structuredContent against its outputSchema.

Runs only where Node 20+ and ``npm ci --prefix stress/mcp-clients`` are present (skipped
otherwise, as in a fresh clone's CI); ``python stress/mcp_clients.py`` runs it by hand.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLIENTS = ROOT / "stress" / "mcp-clients"
NODE = shutil.which("node")


def _node_ok() -> bool:
    if NODE is None or not (CLIENTS / "node_modules" / "@modelcontextprotocol" / "client").is_dir():
        return False
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout.strip()
    return int(version.lstrip("v").split(".")[0]) >= 20


@pytest.mark.skipif(not _node_ok(), reason="needs Node 20+ and `npm ci --prefix stress/mcp-clients`")
def test_typescript_client_validates_every_tool() -> None:
    """All 15 tools called by the TS SDK v2 client over stdio; each result passes its outputSchema (SDK and Ajv)."""
    assert NODE is not None
    done = subprocess.run(
        [NODE, str(CLIENTS / "ts_client.mjs"), sys.executable, str(ROOT)],
        cwd=CLIENTS,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "15 of 15 tools validated by the SDK v2 client and Ajv; 0 failures" in done.stdout, done.stdout
