"""What the store, index and room attack areas share (a module of this package that is not an area).

A document ingested and the server stopped, with its generation file aged past the orphan
age; a tool call's success and text; whether a search finds a word; the server run as a
plain command; a small tmpfs, the full disk of the room area.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from testkit.disk import small_tmpfs
from testkit.results import text_of
from testkit.servers import server_command

from . import stdio_server as _server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from mcp import Client

__all__ = ["ORPHAN_AGE_S", "ROOT", "TEXT", "call", "guide_says", "ingest_stop_age", "run_cli", "searchable", "tmpfs"]

ROOT = Path(__file__).resolve().parents[2]

TEXT = "# Notes\n\n" + "\n\n".join(f"Paragraph {n} is about the quoll number {n}." for n in range(600))

ORPHAN_AGE_S = 3600.0


async def call(client: Client, tool: str, **arguments: object) -> tuple[bool, str]:
    result = await client.call_tool(tool, arguments)
    return not result.is_error, text_of(result)


async def ingest_stop_age(work: Path, name: str) -> tuple[Path, Path, bytes]:
    data = work / name
    async with _server(data) as client:
        ok, said = await call(client, "doc_ingest", text=TEXT, doc_id="q")
        assert ok, said
    [gen] = (data / "docs" / "q").glob("*.jsonl")
    stamp = time.time() - ORPHAN_AGE_S - 60
    os.utime(gen, (stamp, stamp))
    return data, gen, gen.read_bytes()


async def searchable(client: Client, query: str = "quoll") -> tuple[bool, str]:
    ok, said = await call(client, "doc_search", query=query)
    return ok and query in said, said[:120]


async def guide_says(client: Client, state: str) -> bool:
    """Whether context_guide's line on the documents' semantic recall ends in ``state`` within 25 s
    (the server is given 60 s in all); "caught up" only with every chunk embedded."""
    with trio.move_on_after(25):
        while True:
            _, said = await call(client, "context_guide")
            # "1 of 1 chunk embedded", "1,200 of 1,200 chunks embedded" (text/plural).
            done = re.search(r"([\d,]+) of ([\d,]+) chunks? embedded", said)
            line = next((line for line in said.splitlines() if done is not None and done[0] in line), "")
            whole = done is not None and done.group(1) == done.group(2) != "0"
            if line.endswith(f"; {state}") and (whole or state != "caught up"):
                return True
            await trio.sleep(0.5)
    return False


def run_cli(data: Path) -> subprocess.CompletedProcess[str]:
    """The server on ``data`` (audit on) over stdio with nothing to read, run to completion."""
    return run_on(data, server_command(data, audit=True))


def run_on(data: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` run to completion from the repository root, its cache beside ``data``."""
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(data.parent / "cache")},
    )


@contextmanager
def tmpfs(where: Path, size: str) -> Iterator[bool]:
    """A tmpfs of ``size`` at ``where`` while the block runs (:func:`testkit.disk.small_tmpfs`); whether it is mounted."""
    with small_tmpfs(where, size) as failed:
        yield failed is None
