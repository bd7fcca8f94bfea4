"""The command line of a ctxtrio server under test: one spelling for tests/ and stress/.

``python -m ctxtrio --data-dir DATA --no-llm --no-audit EXTRA...``: this interpreter, the
package of this repository (:data:`ROOT` on ``PYTHONPATH``), no LLM (nothing listens on
its default URL in a test), no audit line on stderr (``audit=True`` keeps it).
:func:`server_command` is the argv for ``subprocess``/``trio.run_process``;
:func:`server_params` the same server for the SDK's stdio client.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mcp.client.stdio import StdioServerParameters

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping

__all__ = ["ROOT", "server_command", "server_params"]

#: The repository root: the working directory of a server under test, and its PYTHONPATH.
ROOT = Path(__file__).resolve().parents[1]


def server_command(data: str | os.PathLike[str], *extra: str, audit: bool = False) -> list[str]:
    """``[python, -m, ctxtrio, --data-dir, DATA, --no-llm, --no-audit, *extra]`` (no ``--no-audit`` with ``audit``)."""
    return [
        sys.executable,
        "-m",
        "ctxtrio",
        "--data-dir",
        str(data),
        "--no-llm",
        *(() if audit else ("--no-audit",)),
        *extra,
    ]


def server_params(
    data: str | os.PathLike[str],
    *extra: str,
    audit: bool = False,
    cache: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> StdioServerParameters:
    """:func:`server_command` for the SDK's stdio client, run in :data:`ROOT` with only ``PYTHONPATH`` set
    (and ``XDG_CACHE_HOME``, where warm-start answers are recorded, when ``cache`` is given; ``env`` adds more)."""
    command, *args = server_command(data, *extra, audit=audit)
    environment = {"PYTHONPATH": str(ROOT)}
    if cache is not None:
        environment["XDG_CACHE_HOME"] = str(cache)
    return StdioServerParameters(command=command, args=args, cwd=ROOT, env={**environment, **(env or {})})
