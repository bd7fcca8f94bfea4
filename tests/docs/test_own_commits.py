"""Concurrent ingests in one process: each commit is this process's own, so a replay that applies it (another
ingest's refresh, as commits land between each other's) neither checks its file nor has the index catch it up:
the writer indexes it from the rows it came with."""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from ctxtrio.docs import folders
from ctxtrio.store.handle import StoreHandle

from .conftest import opened

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from ctxtrio.store.records import Record


async def test_concurrent_ingests_ask_no_catch_up_and_no_landing_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """24 ingests at once: every document is searchable, with no path handed to catch_up_later and no
    generation file read to check that it landed (before: most commits were applied by another ingest's
    refresh as another process's, each checked, marked lagging and caught up in a transaction of its own)."""
    caught_up: list[object] = []
    checked: list[object] = []
    catch_up_later, landed = StoreHandle.catch_up_later, folders.generation_landed

    async def spy_catch_up(self: StoreHandle, paths: list[Path]) -> None:
        caught_up.extend(paths)
        await catch_up_later(self, paths)

    def spy_landed(docs: Path, record: Record) -> bool:
        checked.append(record.get("doc"))
        return landed(docs, record)

    monkeypatch.setattr(StoreHandle, "catch_up_later", spy_catch_up)
    monkeypatch.setattr(folders, "generation_landed", spy_landed)
    async with opened(tmp_path) as ctx:
        await ctx.documents.list_documents()  # the first refresh (the startup sweep) is not what is tested

        async def ingest(n: int) -> None:  # sizes from one line to ~17,000 characters (several in threads)
            text = f"# Animal {n}\n\nThe animal number {n} is called zebu{n}.\n\n" + "Plain words here. " * 40 * n
            await ctx.documents.ingest(text=text, doc_id=f"d{n}")

        async with trio.open_nursery() as nursery:
            for n in range(24):
                nursery.start_soon(ingest, n)
        listed = await ctx.documents.list_documents()
        found = [await ctx.documents.search(f"zebu{n}") for n in range(24)]
    assert len(listed) == 24
    assert [[hit.doc_id for hit in result.hits][:1] for result in found] == [[f"d{n}"] for n in range(24)]
    assert caught_up == []
    assert checked == []
