"""``doctor``'s embeddings checks: is the embedding endpoint there, and how much is embedded?

Asks the endpoint for one vector (through the client, like the server), and reads the
vectors file beside the index (chunks) and, through the session service, the session
entries' (``session-vectors.sqlite3``). ``--repair`` drops the rows of documents gone or
replaced and of sessions or entries gone (their vectors stay until a server that has caught
up bounds the texts no row names: ``store/vectors.py``), and the vectors of another model or
dimension, and forgets the items the endpoint refused (an input longer than its batch, say,
before the server's ``--ubatch-size`` was raised); a server with ``--embed-model`` then embeds
what is missing in the background, those included: one running sees the refusals forgotten
within POLL_S (``VectorStore.forgets_seen_elsewhere``), another from its next start.
Deleting a vectors file re-embeds everything in it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import trio

from .._errors import LLMError, StoreError
from ..llm.client import open_llm_client
from ..llm.embeddings import Embedder
from ..llm.messages import LLMSettings
from ..store.layout import removed_for_good
from ..store.reading import DiskFullError
from ..store.vector_look import look
from ..store.vector_schema import VectorsBusyError
from ..store.vector_task import POLL_S
from ..store.vectors import VectorStore
from ..text.plural import plural

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._config import Config
    from .._wiring import Wiring

__all__ = ["check_embeddings", "check_session_vectors", "probe_dimension"]

_TIMEOUT_S = 10.0
#: A vectors file that cannot be opened on a full disk keeps its vectors: deleting it would cost a request each.
_NO_ROOM = "no room on the disk: free some space and run doctor --repair again (the file keeps its vectors)"


async def probe_dimension(config: Config) -> tuple[int | None, str | None]:
    """(the dimension of one vector from the endpoint, None) or (None, why it did not embed)."""
    settings = LLMSettings(
        base_url=config.embed_url,
        model=config.embed_model,
        api_key=config.llm_api_key,
        timeout_s=_TIMEOUT_S,
        embed_timeout_s=_TIMEOUT_S,
    )
    async with open_llm_client(settings) as client:
        try:
            return len((await Embedder(client, config.embed_model).documents(["Hello, world"]))[0]), None
        except LLMError as exc:
            return None, str(exc)


async def check_embeddings(
    config: Config, ctx: Wiring, current: Mapping[str, int], probed: tuple[int | None, str | None], *, repair: bool
) -> tuple[bool, str, dict[str, object] | None]:
    """(ok, the ``embeddings`` line, facts for --json); ``current``: journal -> chunks; ``probed``: :func:`probe_dimension`."""
    url, model = config.embed_url, config.embed_model
    dim, error = probed
    vectors = VectorStore(ctx.data.vectors_path)
    key, dropped, retried, done, older, left = dim, 0, 0, {}, 0, ""
    try:
        # Without --repair nothing is written: the file is only looked at (an older server still running
        # on this data dir keeps its table, a damaged file is kept for doctor to report), none is created.
        if not repair:
            layout = await trio.to_thread.run_sync(look, vectors.path, model, dim)
            older, left = layout.older, layout.describe()
            if layout.current:
                key, done = layout.dimension, layout.done
        else:
            await trio.to_thread.run_sync(vectors.open)
            stored = await trio.to_thread.run_sync(vectors.dimensions, model)
            key = dim if dim is not None else (stored[0] if len(stored) == 1 else None)
            drop = functools.partial(vectors.drop_except, forgotten=removed_for_good(current))
            dropped = await trio.to_thread.run_sync(drop, model, key, set(current))
            retried = await trio.to_thread.run_sync(vectors.forget_refused, model)
            done = await trio.to_thread.run_sync(vectors.done, model, key) if key is not None else {}
            older = await trio.to_thread.run_sync(vectors.older, model)
    except VectorsBusyError as exc:  # a server writing: nothing wrong with the file
        return False, f"vectors file: {exc}; another process holds it, run doctor again", None
    except DiskFullError as exc:  # (--repair's open migrates or heals: it needs room, the vectors stay)
        return False, f"vectors file: {exc}; {_NO_ROOM}", None
    except StoreError as exc:
        # --repair starts a damaged file afresh (VectorStore.open): a StoreError there is another cause.
        cure = f"delete {ctx.data.vectors_path}" if repair else "ctxtrio doctor --repair starts a damaged file afresh"
        return False, f"vectors file: {exc}; {cure}: every chunk is then embedded again", None
    finally:
        await trio.to_thread.run_sync(vectors.close)
    total = sum(current.values())
    embedded = sum(min(len(done.get(journal, ())), chunks) for journal, chunks in current.items())
    facts: dict[str, object] = {
        "url": url,
        "model": model,
        "reachable": error is None,
        "dimension": key,
        "chunks": total,
        "embedded": embedded,
        "older": older,
        "unmigrated": bool(left),  # another layout, left as it is (no --repair)
        "error": error,
        "retried": retried,
    }
    repaired = f"; dropped {plural(dropped, 'vector row')} of documents gone or of another model" if repair else ""
    repaired += f"; {_retried(retried, 'chunk')}" if retried else ""
    # An upgraded file's vectors are linked at the server's next start: say so, lest it be deleted.
    waiting = (
        f"; {plural(older, 'vector')} of an older layout, taken at the server's next start, no request" if older else ""
    )
    progress = f"{embedded:,} of {plural(total, 'chunk')} embedded{f'; {left}' if left else waiting}{repaired}"
    if error is not None:
        return (
            False,
            (
                f"{model} at {url} does not embed ({error}): load an embedding model there, "
                f"or fix --embed-model/--embed-base-url; {progress}"
            ),
            facts,
        )
    return True, f"{model} at {url} works, {dim} dimensions; {progress}", facts


async def check_session_vectors(
    config: Config, ctx: Wiring, dim: int | None, *, repair: bool
) -> tuple[bool, str, dict[str, object] | None]:
    """(ok, the ``session vectors`` line, facts for --json), asked of the session service."""
    path = ctx.data.session_vectors_path
    try:
        check = await ctx.sessions.check_vectors(config.embed_model, dim, repair=repair)
    except VectorsBusyError as exc:
        return False, f"session vectors file: {exc}; another process holds it, run doctor again", None
    except DiskFullError as exc:
        return False, f"session vectors file: {exc}; {_NO_ROOM}", None
    except StoreError as exc:
        cure = f"delete {path}" if repair else "ctxtrio doctor --repair starts a damaged file afresh"
        return False, f"session vectors file: {exc}; {cure}: every entry is then embedded again", None
    facts: dict[str, object] = {
        "dimension": check.dimension,
        "entries": check.entries,
        "embedded": check.embedded,
        "dropped": check.dropped,
        "unmigrated": bool(check.layout),
        "retried": check.retried,
    }
    repaired = (
        f"; dropped {plural(check.dropped, 'vector row')} of sessions or entries gone or of another model"
        if repair
        else ""
    )
    repaired += f"; {_retried(check.retried, 'entry', 'entries')}" if check.retried else ""
    left = f"; session {check.layout}" if check.layout else ""
    return (
        True,
        f"{check.embedded:,} of {plural(check.entries, 'live session entry', 'live session entries')} embedded{left}{repaired}",
        facts,
    )


def _retried(count: int, one: str, many: str | None = None) -> str:
    """What --repair says of the refusals it forgot (``store/vectors.VectorStore.forget_refused``)."""
    said = plural(count, f"refused {one}", f"refused {many}" if many else None)
    return f"{said} to be sent again, by a running server within {POLL_S:g} s (else at its start)"
