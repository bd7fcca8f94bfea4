"""The one progress callback type, for every layer that reports how far a long call got.

``progress(done, total)`` is awaited as work advances (characters of an ingest, parts of
a summary); at the MCP boundary it becomes a progress notification to the client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeAlias

__all__ = ["Progress"]

Progress: TypeAlias = Callable[[float, float], Awaitable[None]]
