"""What can be checked of the image without a Docker daemon: its cache lives in the data volume, its healthcheck is ours."""

from __future__ import annotations

import re
from pathlib import Path

import trio

from tests.cli.runner import ROOT, cli
from tests.transport.serving import spawn

DOCKERFILE = (Path(__file__).resolve().parents[1] / "Dockerfile").read_text(encoding="utf-8")


def _env(name: str) -> str:
    match = re.search(rf"\b{name}=(\S+)", DOCKERFILE)
    assert match is not None, name
    return match.group(1)


def test_the_warm_start_cache_is_inside_the_data_volume() -> None:
    """XDG_CACHE_HOME (where platformdirs puts warm-start.json) is under CTX_DATA_DIR, which is the VOLUME."""
    data = _env("CTX_DATA_DIR")
    assert _env("XDG_CACHE_HOME").startswith(data.rstrip("/") + "/")
    assert f'VOLUME ["{data}"]' in DOCKERFILE


def test_the_healthcheck_runs_the_module_that_reads_the_server() -> None:
    """HEALTHCHECK runs ctxtrio.cli.healthcheck (tested in tests/cli/test_healthcheck.py), which the package ships."""
    assert 'CMD ["python", "-m", "ctxtrio.cli.healthcheck"]' in DOCKERFILE
    assert (ROOT / "ctxtrio" / "cli" / "healthcheck.py").is_file()


async def test_a_cache_in_the_data_dir_is_written_and_harmless(tmp_path: Path) -> None:
    """With XDG_CACHE_HOME=DATA/.cache a first start records its answers there, and doctor finds the data dir ok."""
    data = tmp_path / "data"
    with trio.fail_after(120):
        process = await spawn("--data-dir", str(data), "--no-llm", env={"XDG_CACHE_HOME": str(data / ".cache")})
        assert process.stdin is not None and process.stdout is not None
        hello = (
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
            '"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}\n'
        )
        await process.stdin.send_all(hello.encode())
        await process.stdout.receive_some()
        await process.stdin.aclose()
        await process.wait()
    assert (data / ".cache" / "ctxtrio" / "warm-start.json").is_file()
    doctor = await cli(data, "doctor")
    assert doctor.code == 0, doctor.out + doctor.err
