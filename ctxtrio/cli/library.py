"""Opening the data dir for a subcommand: the library's component tree (``_wiring.open_wiring``), no LLM."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from .._wiring import open_wiring
from ..store.layout import not_writable

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator
    from pathlib import Path

    import trio

    from .._config import Config
    from .._wiring import Wiring

__all__ = ["opens_read_only", "open_library"]

#: Subcommands that read session journals and nothing else: an existing data dir is opened read-only, so
#: they read a data dir this user cannot write (a read-only mount, another user's files) and, beside a
#: server, neither open the index nor wait for its write lock (which, held, cost 2 s and a warning).
SESSION_READERS = frozenset({"sessions", "show", "export"})
#: Subcommands that read documents. Opening them sweeps as a server's start does (obsolete generations
#: removed, the index caught up with journals a crash left ahead of it), which a read-only store refuses;
#: so they open the store for writing where the data dir can be written, and read-only where it cannot.
DOCUMENT_READERS = frozenset({"docs", "search"})


def opens_read_only(name: str, args: argparse.Namespace, root: Path) -> bool:
    """Whether subcommand ``name`` opens the data dir at ``root`` read-only (blocking: asks the file system).

    ``doctor`` without ``--repair`` always does (it creates nothing, not even a missing data dir). The
    readers do for a data dir that exists (a missing one is created as before, so a fresh install lists
    nothing instead of failing); the writers never do (they refuse a data dir they cannot write).
    """
    if name == "doctor":
        return not args.repair
    root = root.expanduser().absolute()
    if name not in SESSION_READERS | DOCUMENT_READERS or not root.is_dir():
        return False
    if name in SESSION_READERS:
        return True
    try:
        return not_writable(root) is not None
    except OSError:  # (cannot be looked at: opening it for writing says why)
        return False


@asynccontextmanager
async def open_library(config: Config, stop: trio.CancelScope, *, read_only: bool = False) -> AsyncIterator[Wiring]:
    """``open_context``'s wiring for a subcommand: same data dir, store writer and locks as a server.

    The body runs inside ``stop``, which Ctrl-C cancels: the work unwinds (an ingest
    discards its uncommitted generation through the still-running store writer), then
    the store drains and closes as usual. The LLM and the embedder stay off (nothing here
    summarizes or embeds; ``doctor`` talks to the endpoints itself), so no background task starts.
    ``read_only``: the store only reads (``open_wiring``'s): the ``args.read_only`` that
    ``cli/run.py`` sets from :func:`opens_read_only`.
    """
    async with open_wiring(config.replace(llm_enabled=False, audit=False, embed_model=""), read_only=read_only) as ctx:
        with stop:
            yield ctx
