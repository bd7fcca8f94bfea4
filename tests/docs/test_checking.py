"""DocumentService's looks at the stored documents (``ctxtrio doctor``, ``ingest``): counts, damage, index, no sweep."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from typing import TYPE_CHECKING

from ctxtrio.docs.folders import ORPHAN_AGE_S
from ctxtrio.docs.model import DocumentCheck, IndexCheck

from .conftest import opened

if TYPE_CHECKING:
    from pathlib import Path

TEXT = "# Notes\n\n" + "\n\n".join(f"Paragraph {n} is about the numbat {n}, at some length." for n in range(300))


def _copy_of_the_generation(tmp_path: Path, doc_id: str, name: str) -> tuple[Path, Path]:
    """The document's one generation file, and a copy of it beside it named ``name``."""
    [path] = (tmp_path / "data" / "docs" / doc_id).glob("*.jsonl")
    copy = path.with_name(name)
    shutil.copyfile(path, copy)
    return path, copy


async def test_check_journals_counts_each_document_and_the_damage(tmp_path: Path) -> None:
    """Every current document's journal with the chunks promised; a short journal, a torn tail, a malformed catalog line."""
    async with opened(tmp_path) as ctx:
        a = (await ctx.documents.ingest(text=TEXT, doc_id="a")).doc
        b = (await ctx.documents.ingest(text="one short line", doc_id="b")).doc
        check = await ctx.documents.check_journals()
        [a_path] = (tmp_path / "data" / "docs" / "a").glob("*.jsonl")
        [b_path] = (tmp_path / "data" / "docs" / "b").glob("*.jsonl")
        promised = {ctx.data.journal_name(a_path): a.chunks, ctx.data.journal_name(b_path): b.chunks}
    assert a.chunks > 2 and check == DocumentCheck(promised, 0, 0, ())
    lines = a_path.read_bytes().splitlines(keepends=True)
    a_path.write_bytes(b"".join(lines[:-1]) + b'{"v":1,"kind":"chunk"')  # the last chunk gone, a torn tail instead
    with (tmp_path / "data" / "docs" / "catalog.jsonl").open("ab") as catalog:
        catalog.write(b"not json at all\n")
    async with opened(tmp_path) as ctx:
        damaged = await ctx.documents.check_journals()
    assert damaged.journals == check.journals
    assert (damaged.torn, damaged.malformed, damaged.short) == (1, 1, (("a", a.chunks - 1, a.chunks),))


async def test_check_index_finds_rows_behind_and_stale_and_rebuild_mends_both(tmp_path: Path) -> None:
    """Rows deleted behind the store's back and rows of a journal whose file is gone are found; a rebuild mends both."""
    async with opened(tmp_path) as ctx:
        doc = (await ctx.documents.ingest(text=TEXT, doc_id="a")).doc
        path, copy = _copy_of_the_generation(tmp_path, "a", "copy.jsonl")
        await ctx.store.reindex(copy)  # rows of a journal no catalog record makes current
        copy.unlink()
        journal, stale = ctx.data.journal_name(path), ctx.data.journal_name(copy)
        assert await ctx.documents.check_index() == IndexCheck(1, 2, doc.chunks, (), (stale,))
    with sqlite3.connect(tmp_path / "data" / "index.sqlite3") as conn:
        conn.execute("DELETE FROM chunks WHERE journal = ?", (journal,))
    async with opened(tmp_path) as ctx:
        behind = await ctx.documents.check_index()
        assert (behind.rows, behind.behind, behind.stale) == (0, (journal,), (stale,))
        assert await ctx.documents.rebuild_index() == IndexCheck(1, 1, doc.chunks, (), (), rebuilt=1, dropped=1)
        assert await ctx.documents.check_index() == IndexCheck(1, 1, doc.chunks, (), ())
        assert (await ctx.documents.search("numbat")).hits


async def test_a_start_drops_the_rows_of_a_generation_whose_file_is_gone(tmp_path: Path) -> None:
    """A removal deletes the file and leaves its rows to the next index flush: a process killed between left
    rows no start dropped (the sweep goes by the files), and doctor said 'stale journals' until --repair."""
    async with opened(tmp_path) as ctx:
        doc = (await ctx.documents.ingest(text=TEXT, doc_id="a")).doc
        _, copy = _copy_of_the_generation(tmp_path, "a", "gone.jsonl")
        await ctx.store.reindex(copy)  # the rows of a replaced generation, as a kill left them
        copy.unlink()
        stale = ctx.data.journal_name(copy)
        assert (await ctx.documents.check_index()).stale == (stale,)
    async with opened(tmp_path) as ctx:
        assert await ctx.documents.list_documents() == [doc]  # opens the documents: the start's sweep
        assert await ctx.documents.check_index() == IndexCheck(1, 1, doc.chunks, (), ())
        assert (await ctx.documents.search("numbat")).hits


async def test_the_looks_sweep_nothing_where_a_refresh_would(tmp_path: Path) -> None:
    """An old uncommitted generation stays put through every check; list_documents (a refresh) sets it aside."""
    async with opened(tmp_path) as ctx:
        doc = (await ctx.documents.ingest(text=TEXT, doc_id="a")).doc
    _, orphan = _copy_of_the_generation(tmp_path, "a", "orphan.jsonl")
    stamp = time.time() - ORPHAN_AGE_S - 60
    os.utime(orphan, (stamp, stamp))
    async with opened(tmp_path) as ctx:
        assert await ctx.documents.committed_documents() == [doc]
        assert list((await ctx.documents.check_journals()).journals.values()) == [doc.chunks]
        await ctx.documents.check_index()
        assert orphan.exists()
        assert await ctx.documents.list_documents() == [doc]
        assert not orphan.exists()
