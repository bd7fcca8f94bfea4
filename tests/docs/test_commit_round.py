"""A document's commit and its last chunks share one fsync round: every state a crash in that round
can leave on disk reads as the old version or the new one, never a mix and never a document that is gone."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

import pytest

from ctxtrio._errors import NotFoundError
from ctxtrio.docs import repository
from ctxtrio.docs.folders import ORPHAN_AGE_S
from ctxtrio.docs.repository import Repository
from ctxtrio.store.ops import ENDS_AT
from ctxtrio.store.reading import read_journal

from .conftest import opened

if TYPE_CHECKING:
    from pathlib import Path

OLD = "# Version\n\n" + "\n\n".join(f"Paragraph {n} mentions aardvark{n % 7} and old material." for n in range(300))
NEW = "# Version\n\n" + "\n\n".join(f"Paragraph {n} mentions zebra{n % 5} and new material." for n in range(200))


async def _no_removal(self: Repository, obsolete: list[tuple[str, str]]) -> None:
    """Stands in for Repository._remove: the crash comes before the replaced generation is removed."""


def _cut(path: Path, how: str) -> None:
    """What a crash in the commit's round may leave of the new generation file."""
    content = path.read_bytes()
    if how == "torn tail":  # the last chunk line only partly on disk
        path.write_bytes(content[: len(content) - 40])
    elif how == "zeros at the end":  # the size made it to disk, the last block did not
        path.write_bytes(content[:-100] + bytes(100))
    elif how == "no chunks":  # the commit without any of its data
        path.write_bytes(b"")
    elif how == "no folder entry":  # the file's own entry in docs/<doc>/ was not durable
        path.unlink()


@pytest.mark.parametrize("how", ["torn tail", "zeros at the end", "no chunks", "no folder entry"])
async def test_a_reingest_whose_commit_landed_without_its_chunks_falls_back_to_the_old_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """A commit whose generation file does not reach the end it names is skipped after a restart: the old
    version is read, searched and listed, and the cut-short file is set aside once old, not deleted."""
    async with opened(tmp_path) as ctx:
        old = (await ctx.documents.ingest(text=OLD, doc_id="v")).doc
        monkeypatch.setattr(Repository, "_remove", _no_removal)
        await ctx.documents.ingest(text=NEW, doc_id="v")
        new_gen = ctx.documents._repo.entry("v").gen
    monkeypatch.undo()
    catalog = read_journal(tmp_path / "data" / "docs" / "catalog.jsonl").records
    assert catalog[-1].data["gen"] == new_gen and isinstance(catalog[-1].data[ENDS_AT], int)
    new_path = tmp_path / "data" / "docs" / "v" / f"{new_gen}.jsonl"
    _cut(new_path, how)
    if new_path.exists():
        stamp = time.time() - ORPHAN_AGE_S - 60
        os.utime(new_path, (stamp, stamp))
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        assert [doc.chunks for doc in await docs.list_documents()] == [old.chunks]
        window = await docs.window("v", budget_tokens=100_000)
        assert "".join(chunk.text for chunk in window.chunks) == OLD
        assert (await docs.search("aardvark3")).hits
        assert (await docs.search("zebra3")).hits == ()
        assert not new_path.exists()
        kept = ctx.data.lost_found / "docs" / "v" / f"{new_gen}.jsonl"
        assert kept.exists() == (how != "no folder entry")  # set aside, never deleted
        again = (await docs.ingest(text=NEW, doc_id="v")).doc  # and the document takes a new version
        assert again.chunks != old.chunks and (await docs.search("zebra3")).hits
        assert docs._repo.cut_short == {}


async def test_a_new_document_whose_folder_was_not_durable_is_simply_not_there(tmp_path: Path) -> None:
    """A first ingest whose commit landed but whose folder entry in docs/ did not: no document, no error."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=OLD, doc_id="kept")
        await ctx.documents.ingest(text=NEW, doc_id="lost")
    for path in (tmp_path / "data" / "docs" / "lost").iterdir():
        path.unlink()
    (tmp_path / "data" / "docs" / "lost").rmdir()
    async with opened(tmp_path) as ctx:
        assert [doc.doc_id for doc in await ctx.documents.list_documents()] == ["kept"]
        with pytest.raises(NotFoundError, match="did not land whole"):
            await ctx.documents.get("lost")
        assert (await ctx.documents.search("zebra3")).hits == ()


async def test_another_process_reading_the_commit_finds_the_chunks(tmp_path: Path) -> None:
    """A second process on the same data dir replays the first one's commits (their files checked) and reads them."""
    async with opened(tmp_path) as first, opened(tmp_path) as second:
        await second.documents.list_documents()
        await first.documents.ingest(text=OLD, doc_id="v")
        await first.documents.ingest(text=NEW, doc_id="v")
        window = await second.documents.window("v", budget_tokens=100_000)
        assert "".join(chunk.text for chunk in window.chunks) == NEW


async def test_another_process_removes_a_replaced_generation_only_once_its_replacement_is_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second process that replays a re-ingest fsyncs the catalog and the new generation file (and its
    folder) before it removes the old file: the first process's round may still run, and a removal that
    outlived a power loss must never outlive the version that replaced it."""
    events: list[tuple[str, object]] = []
    real_fsync = repository._fsync

    def fsync(path: Path) -> None:
        events.append(("fsync", path))
        real_fsync(path)

    async def remove(self: Repository, obsolete: list[tuple[str, str]]) -> None:
        events.append(("remove", tuple(obsolete)))

    async with opened(tmp_path) as first, opened(tmp_path) as second:
        await first.documents.ingest(text=OLD, doc_id="v")
        old_gen = first.documents._repo.entry("v").gen
        await second.documents.list_documents()
        await first.documents.ingest(text=NEW, doc_id="v")
        new_path = first.documents._repo.gen_path("v", first.documents._repo.entry("v").gen)
        monkeypatch.setattr(repository, "_fsync", fsync)
        monkeypatch.setattr(Repository, "_remove", remove)
        await second.documents.list_documents()
    catalog = tmp_path / "data" / "docs" / "catalog.jsonl"
    assert events == [
        ("fsync", catalog),
        ("fsync", new_path),
        ("fsync", new_path.parent),
        ("remove", (("v", old_gen),)),
    ]


async def test_a_replaced_version_is_set_aside_not_removed_when_its_replacement_lost_a_block_inside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a crash in a re-ingest's round, the old file is still there and the new one reaches its end but
    lost a block inside (zeros): the startup sweep moves the old file to lost-and-found instead of deleting it."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=OLD, doc_id="v")
        old_gen = ctx.documents._repo.entry("v").gen
        monkeypatch.setattr(Repository, "_remove", _no_removal)
        await ctx.documents.ingest(text=NEW, doc_id="v")
        new_gen = ctx.documents._repo.entry("v").gen
    monkeypatch.undo()
    docs = tmp_path / "data" / "docs" / "v"
    content = (docs / f"{new_gen}.jsonl").read_bytes()
    middle = len(content) // 2
    (docs / f"{new_gen}.jsonl").write_bytes(content[:middle] + bytes(4096) + content[middle + 4096 :])
    async with opened(tmp_path) as ctx:
        await ctx.documents.list_documents()
        kept = ctx.data.lost_found / "docs" / "v" / f"{old_gen}.jsonl"
        assert kept.exists() and not (docs / f"{old_gen}.jsonl").exists()
        assert kept.read_bytes().count(b'"kind":"chunk"') > 0
