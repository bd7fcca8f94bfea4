"""Opening the data dir for a subcommand: the library's component tree (``_wiring.open_wiring``), no LLM."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from .._wiring import open_wiring

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import trio

    from .._config import Config
    from .._wiring import Wiring

__all__ = ["open_library"]


@asynccontextmanager
async def open_library(config: Config, stop: trio.CancelScope, *, read_only: bool = False) -> AsyncIterator[Wiring]:
    """``open_context``'s wiring for a subcommand: same data dir, store writer and locks as a server.

    The body runs inside ``stop``, which Ctrl-C cancels: the work unwinds (an ingest
    discards its uncommitted generation through the still-running store writer), then
    the store drains and closes as usual. The LLM and the embedder stay off (nothing here
    summarizes or embeds; ``doctor`` talks to the endpoints itself), so no background task starts.
    ``read_only``: the store only reads (``open_wiring``'s), for ``doctor`` without ``--repair``.
    """
    async with open_wiring(config.replace(llm_enabled=False, audit=False, embed_model=""), read_only=read_only) as ctx:
        with stop:
            yield ctx
