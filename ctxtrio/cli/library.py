"""Opening the data dir for a subcommand: the library's own services, no LLM, no calibration."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from .._app import open_context
from .._config import Config
from .._context import Context

__all__ = ["open_library"]


@asynccontextmanager
async def open_library(config: Config) -> AsyncIterator[Context]:
    """``open_context`` for a subcommand: same data dir, store writer and locks as a server.

    The LLM stays off (nothing here summarizes; ``doctor`` talks to the endpoint
    itself), so no calibration task starts and nothing waits on the endpoint.
    """
    async with open_context(config.replace(llm_enabled=False, audit=False)) as ctx:
        yield ctx
