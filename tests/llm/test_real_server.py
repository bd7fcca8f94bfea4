"""stress/real_server.py: the model server it starts does not outlive the script that started it.

The model is a stand-in: a "venv" whose python serves ``GET /v1/models`` as ``llama_cpp.server``
would, so no llama-cpp-python and no GGUF are needed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

STRESS = Path(__file__).resolve().parents[2] / "stress"

STAND_IN = """\
import http.server, json, os, sys
print(os.getpid(), flush=True)
port = int(sys.argv[sys.argv.index("--port") + 1])
class Models(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": "stand-in"}]}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", port), Models).serve_forever()
"""

SCRIPT = """\
import sys, time
from pathlib import Path
from real_server import running_server
with running_server(Path(sys.argv[1]), Path("stand-in.gguf"), n_threads=1, log_path=Path(sys.argv[2])) as server:
    print(server.root, flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    """Running, not a zombie nobody reaped (a container's pid 1 may not reap orphans)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="the server is tied to its parent through Linux's prctl")
def test_a_script_stopped_by_sigterm_takes_its_model_server_with_it(tmp_path: Path) -> None:
    """``kill PID`` of a script inside running_server (no finally runs) ends the model server too."""
    (tmp_path / "fake" / "llama_cpp").mkdir(parents=True)
    (tmp_path / "fake" / "llama_cpp" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "fake" / "llama_cpp" / "server.py").write_text(STAND_IN, encoding="utf-8")
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nPYTHONPATH={tmp_path / "fake"} exec {sys.executable} "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    log = tmp_path / "server.log"
    script = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "venv"), str(log)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(STRESS)},
    )
    assert script.stdout is not None
    assert script.stdout.readline().startswith(b"http://127.0.0.1:")
    server_pid = int(log.read_text(encoding="utf-8").split()[0])
    try:
        script.send_signal(signal.SIGTERM)
        assert script.wait(timeout=30) == -signal.SIGTERM
        deadline = time.monotonic() + 10
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(server_pid), "the model server outlived the script"
    finally:
        script.stdout.close()
        if _alive(server_pid):  # the stand-in this test started, left running without the fix
            os.kill(server_pid, signal.SIGKILL)


def test_help_is_answered_not_taken_for_the_venv(tmp_path: Path) -> None:
    """``python stress/real_server.py --help`` printed "building --help ..." and ran ``python -m venv --help``: the
    script read sys.argv by position. It answers its usage and builds nothing."""
    done = subprocess.run(
        [sys.executable, str(STRESS / "real_server.py"), "--help"],
        cwd=tmp_path,
        env={**os.environ, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.startswith("usage: real_server.py [-h] [venv] [model]"), done
    assert "building" not in done.stderr and list(tmp_path.iterdir()) == [], done
