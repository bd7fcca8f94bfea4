"""What the two answer benches share for semantic recall: the endpoint's flags, and the wait for every vector.

``retrieval_bench.py`` (chunks) and ``recall_bench.py`` (session entries) both run the real
server with ``--embed-model``/``--embed-base-url`` and ask their questions only once every
item is embedded: a question asked while the background task is still embedding is answered
against part of the vectors, and the count measures the race, not the ranking.

:func:`caught_up` is that wait, for either background task (both are
:class:`~ctxtrio.store.vector_task.VectorTask`). "Caught up" counts only from a pass that
began after the caller's writes: one before them (on a tiny set, the pass over the empty
store at startup) said caught up with nothing to embed, and every question went without
semantic recall. Pass ``mark + 1`` may have begun before the writes and end after them, so
pass ``mark + 2`` began after them; the wakes only spare the polls' waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

from ctxtrio.store import vector_task

if TYPE_CHECKING:
    import argparse

    from ctxtrio.store.vector_task import VectorTask

__all__ = ["RECALL_SKIPPED", "SEARCH_SKIPPED", "add_embed_arguments", "caught_up", "set_query_wait"]

#: How an answer that went without semantic recall says so: a search's closing note (docs/render.py),
#: a recall's (memory/packing.py); both benches count them.
SEARCH_SKIPPED = "Keyword search only:"
RECALL_SKIPPED = "keyword recall only:"


def add_embed_arguments(parser: argparse.ArgumentParser) -> None:
    """``--embed-model``, ``--embed-base-url`` and ``--query-wait``, as both benches take them."""
    parser.add_argument("--embed-model", help="semantic recall with this embedding model")
    parser.add_argument("--embed-base-url", help="where --embed-model is served")
    parser.add_argument("--query-wait", type=float, help="seconds a search waits for its query's vector")


def set_query_wait(seconds: float | None) -> None:
    """``--query-wait``: how long a search or recall waits for its query's vector (``vector_task.QUERY_S``,
    0.5 s in the server) before answering from BM25 alone; a loaded machine needs more."""
    if seconds is not None:
        vector_task.QUERY_S = seconds


async def caught_up(task: VectorTask) -> None:
    """Return once a pass of ``task`` that began after this call found nothing left to embed (see the module doc)."""
    mark = task.passes
    while task.passes < mark + 2 or task.state != "caught up":
        task.wake()
        await trio.sleep(0.2)
