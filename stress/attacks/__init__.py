"""Attack rows for ``stress/attack.py``: one module per area, each exporting ``run``.

Every module under this package defines::

    def run(work: Path) -> list[Row]: ...

which performs its attacks (subprocesses, loopback servers only, bounded in count and
time) inside ``work``, a fresh temporary folder it owns, and returns one ``Row`` per
fault. ``stress/attack.py`` discovers the modules, runs each, and prints the table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Row:
    """One fault or bad input: what was done, what should happen, what did happen."""

    fault: str
    expected: str
    result: str
    held: bool


# Shared by the area modules: a stdio server on its own data dir, a tool result's text,
# and a wrapper that turns a crashed or overlong attack into a row that did not hold.

import os  # noqa: E402
from contextlib import asynccontextmanager  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING  # noqa: E402

import trio  # noqa: E402
from mcp import Client  # noqa: E402

from testkit.servers import server_params  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]


def stdio_params(data: Path, *extra: str) -> StdioServerParameters:
    """``python -m ctxtrio`` on ``data`` (no LLM, no audit), with its own warm-start cache."""
    return server_params(data, *extra, cache=data.parent / "cache", env={"PATH": os.environ.get("PATH", "")})


@asynccontextmanager
async def stdio_server(data: Path, *extra: str) -> AsyncIterator[Client]:
    """A connected client of a fresh stdio server on ``data``; 60 s to start and finish."""
    with trio.fail_after(60):
        async with Client(stdio_params(data, *extra)) as client:
            yield client


async def guarded(name: str, attack: Callable[[], Awaitable[Row | list[Row]]], limit_s: float) -> list[Row]:
    """Run one attack; a crash or a run past ``limit_s`` is a row that did not hold."""
    try:
        with trio.fail_after(limit_s):
            found = await attack()
    except Exception as exc:  # noqa: BLE001  (an attack that crashes is a row that did not hold)
        return [Row(name, "(attack ran)", f"attack crashed: {type(exc).__name__}: {exc}"[:160], False)]
    return found if isinstance(found, list) else [found]
