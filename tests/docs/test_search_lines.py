"""Search reads only the matching chunks' journal lines; an index of an older schema is rebuilt."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxtrio.docs import chunks, loaded
from ctxtrio.docs.service import DocumentService
from ctxtrio.store.index_tables import SCHEMA_VERSION, TOKENIZER

from .conftest import opened

if TYPE_CHECKING:
    import pytest


async def test_search_does_not_load_whole_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hits of documents not in memory are read line by line, verbatim, without loading them."""
    loads: list[Path] = []
    real = chunks.load_generation

    def counting(store: Any, path: Path, **kwargs: Any) -> Any:
        loads.append(path)
        return real(store, path, **kwargs)

    monkeypatch.setattr(loaded, "load_generation", counting)
    async with opened(tmp_path) as ctx:
        docs = DocumentService(ctx.store, ctx.live, ctx.config, cache_chars=1)
        texts = {
            f"d{n}": f"# Part {n}\n\nThe zebra number {n} grazes here.\n\n" + "filler words here. " * 400
            for n in range(3)
        }
        for doc_id, text in texts.items():
            await docs.ingest(text=text, doc_id=doc_id)
        assert len(docs._repo._loaded) == 1  # the cache keeps one document
        loads.clear()
        found = await docs.search("zebra grazes")
        assert sorted(hit.doc_id for hit in found.hits) == ["d0", "d1", "d2"]
        for hit in found.hits:
            assert hit.text in texts[hit.doc_id] and "zebra" in hit.text
        assert loads == []


async def test_index_of_an_older_schema_is_rebuilt_from_the_journals(tmp_path: Path) -> None:
    """Opening an index written by an older version empties it and re-indexes every document."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text="# Notes\n\nThe quokka smiles.", doc_id="q")
        path = ctx.data.index_path
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE journals (name TEXT PRIMARY KEY, indexed_offset INTEGER NOT NULL);"
        f'CREATE VIRTUAL TABLE chunks USING fts5(terms, journal UNINDEXED, item UNINDEXED, tokenize="{TOKENIZER}");'
        "INSERT INTO journals VALUES ('docs/q/x.jsonl', 999999);"
    )
    old.close()
    async with opened(tmp_path) as ctx:
        found = await ctx.documents.search("quokka")
        assert [hit.doc_id for hit in found.hits] == ["q"] and "quokka" in found.hits[0].text
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert check.execute("SELECT count(*) FROM journals WHERE name = 'docs/q/x.jsonl'").fetchone()[0] == 0
    check.close()
