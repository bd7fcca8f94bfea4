"""``doctor``'s embeddings check: is the embedding endpoint there, and how much is embedded?

Asks the endpoint for one vector (through the client, like the server), and reads the
vectors file beside the index. ``--repair`` drops vectors of documents gone or replaced
and of another model or dimension; a server with ``--embed-model`` then embeds what is
missing in the background. Deleting ``vectors.sqlite3`` re-embeds everything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from .._errors import LLMError, StoreError
from ..llm.client import open_llm_client
from ..llm.embeddings import Embedder
from ..llm.messages import LLMSettings
from ..store.vectors import VectorStore

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._config import Config
    from .._wiring import Wiring

__all__ = ["check_embeddings"]

_TIMEOUT_S = 10.0


async def check_embeddings(
    config: Config, ctx: Wiring, current: Mapping[str, int], *, repair: bool
) -> tuple[bool, str, dict[str, object] | None]:
    """(ok, the ``embeddings`` line, facts for --json); ``current``: journal -> chunks."""
    if not config.embed_model:
        return True, "off (no --embed-model): search is by keywords only", None
    url, model = config.embed_url, config.embed_model
    settings = LLMSettings(
        base_url=url, model=model, api_key=config.llm_api_key, timeout_s=_TIMEOUT_S, embed_timeout_s=_TIMEOUT_S
    )
    dim: int | None = None
    error: str | None = None
    async with open_llm_client(settings) as client:
        try:
            dim = len((await Embedder(client, model).documents(["Hello, world"]))[0])
        except LLMError as exc:
            error = str(exc)
    vectors = VectorStore(ctx.data.vectors_path)
    try:
        await trio.to_thread.run_sync(vectors.open)
        stored = await trio.to_thread.run_sync(vectors.dimensions, model)
        key = dim if dim is not None else (stored[0] if len(stored) == 1 else None)
        dropped = await trio.to_thread.run_sync(vectors.drop_except, model, key, set(current)) if repair else 0
        done = await trio.to_thread.run_sync(vectors.done, model, key) if key is not None else {}
    except StoreError as exc:
        return False, f"vectors file: {exc}; delete {ctx.data.vectors_path} to re-embed", None
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
        "error": error,
    }
    repaired = f"; dropped {dropped} vectors of documents gone or of another model" if repair else ""
    progress = f"{embedded} of {total} chunks embedded{repaired}"
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
