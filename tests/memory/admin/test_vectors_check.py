"""SessionService.check_vectors (``ctxtrio doctor``): live entries embedded, and what a repair drops."""

from __future__ import annotations

from typing import TYPE_CHECKING

import ctxtrio
from ctxtrio.memory.state.base import entry_key
from ctxtrio.store.vectors import VectorRow, VectorStore

from ..test_semantic import stored

if TYPE_CHECKING:
    from pathlib import Path


def _seed(path: Path, rows: list[tuple[str, str, str, int]]) -> None:
    """Vectors (model, session, key, dimension) written straight into the file, as the embedder would."""
    vectors = VectorStore(path)
    vectors.open()
    try:
        for model, session_id, key, dim in rows:
            vectors.add(model, dim, [VectorRow(session_id, key, 0, 0, 0, [1.0] + [0.0] * (dim - 1))])
    finally:
        vectors.close()


async def test_check_vectors_counts_live_entries_and_repair_drops_what_is_gone(tmp_path: Path) -> None:
    """2 of 3 live entries embedded; a repair drops an unknown text's, a gone session's and another model's vector, and nothing live."""
    config = ctxtrio.Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    async with ctxtrio.open_context(config) as ctx:
        a = (await ctx.sessions.append("s", "the deploy runs at noon")).entry
        b = (await ctx.sessions.append("s", "tokens expire after an hour")).entry
        await ctx.sessions.append("s", "not embedded yet")
        kept = {entry_key(a.id, a.text), entry_key(b.id, b.text)}
        path = ctx.data.session_vectors_path
        _seed(
            path,
            [
                *(("m", "s", key, 4) for key in kept),
                ("m", "s", entry_key(a.id, "an older text of it"), 4),
                ("m", "gone", "e1#0000000000000000", 4),
                ("other", "s", entry_key(a.id, a.text), 8),
            ],
        )
        assert await ctx.sessions.check_vectors("m", 4) == ctxtrio.EntryVectorCheck(4, 3, 2, 0)
        assert await ctx.sessions.check_vectors("m", None) == ctxtrio.EntryVectorCheck(4, 3, 2, 0)  # the one stored
        assert await ctx.sessions.check_vectors("m", 4, repair=True) == ctxtrio.EntryVectorCheck(4, 3, 2, 3)
        assert stored(ctx, "m", 4) == {"s": kept} and stored(ctx, "other", 8) == {}
        assert await ctx.sessions.check_vectors("m", 4, repair=True) == ctxtrio.EntryVectorCheck(4, 3, 2, 0)
