"""stdout that cannot be written (a full disk behind ``> file``) is one line on stderr and exit 1, never a traceback."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

import pytest
import trio

import ctxtrio

from .runner import ENV, ROOT, command

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (every write: ENOSPC)")


async def _filled(data: Path) -> None:
    async with ctxtrio.open_context(ctxtrio.Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        await ctx.sessions.append("work", "cookies stay")
        await ctx.documents.ingest(text="# Deploys\n\nThe deploy runs at noon.\n", title="deploys")


@pytest.mark.parametrize(
    "args", [("sessions",), ("sessions", "--json"), ("show", "work"), ("export", "--all"), ("search", "noon")]
)
def test_a_full_disk_behind_stdout_is_one_line_and_exit_1(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Each command's output to /dev/full: exit 1 and 'cannot write the output: No space left on device'
    (it was an exception group's traceback, exit 1), so a script sees the export failed and why."""
    data = tmp_path / "data"
    trio.run(_filled, data)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            command(data, *args), stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=ENV, timeout=60
        )
    assert done.returncode == 1
    assert done.stderr == "ctxtrio: error: cannot write the output: No space left on device; the output is incomplete\n"
