"""Data is never deleted because metadata is unreadable; a forget that cannot finish changes nothing (issue 11: D1, W4)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from ctxtrio._errors import StoreError
from ctxtrio.docs.folders import ORPHAN_AGE_S

from .conftest import opened

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TEXT = "# Notes\n\n" + "\n\n".join(f"Paragraph {n} is about the numbat {n}." for n in range(200))


async def _ingest_then_age(tmp_path: Path) -> tuple[Path, bytes]:
    """Ingest one document, stop, and make its generation file older than the orphan age."""
    async with opened(tmp_path) as ctx:
        doc = (await ctx.documents.ingest(text=TEXT, doc_id="n")).doc
        assert doc.chunks > 0
    [path] = (tmp_path / "data" / "docs" / "n").glob("*.jsonl")
    stamp = time.time() - ORPHAN_AGE_S - 60
    os.utime(path, (stamp, stamp))
    return path, path.read_bytes()


def _damage_commit_line(catalog: Path) -> None:
    lines = catalog.read_bytes().splitlines(keepends=True)
    lines = [b'{"v":1,"kind":"commit", damaged\n' if b'"commit"' in line else line for line in lines]
    catalog.write_bytes(b"".join(lines))


@pytest.mark.parametrize("damage", ["damaged commit line", "catalog cut back"])
async def test_unaccounted_generation_goes_to_lost_and_found(tmp_path: Path, damage: str) -> None:
    """D1: with the commit line damaged or cut off, the startup sweep moves the old chunk file
    to lost-and-found (same bytes) and reports it, instead of deleting it."""
    path, content = await _ingest_then_age(tmp_path)
    catalog = tmp_path / "data" / "docs" / "catalog.jsonl"
    if damage == "catalog cut back":
        with open(catalog, "r+b") as handle:
            handle.truncate(0)
    else:
        _damage_commit_line(catalog)
    async with opened(tmp_path) as ctx:
        assert await ctx.documents.list_documents() == []
        kept = ctx.data.lost_found / "docs" / "n" / path.name
        assert kept.read_bytes() == content
        assert ctx.documents._repo.lost == [kept]
        assert not path.exists()


async def test_obsolete_generation_proved_by_a_readable_record_is_removed(tmp_path: Path) -> None:
    """D1: a generation a readable forget record makes obsolete is deleted, not set aside."""
    path, _ = await _ingest_then_age(tmp_path)
    async with opened(tmp_path) as ctx:
        await ctx.documents.forget("n")
    async with opened(tmp_path) as ctx:
        assert not path.exists()
        assert not (ctx.data.lost_found / "docs" / "n").exists()


@contextmanager
def _read_only(directory: Path) -> Iterator[None]:
    """Make ``directory`` refuse new and removed entries, as ``chmod a-w`` does for a non-root user.

    As root (who ignores permission bits) the immutable attribute does it: chattr(1),
    "A file with the 'i' attribute cannot be modified ... no link can be created to
    this file" -- for a directory, no entry can be created, removed or renamed.
    """
    if os.geteuid() != 0:
        directory.chmod(0o500)
        try:
            yield
        finally:
            directory.chmod(0o700)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(directory)], check=False).returncode:
        pytest.skip("running as root without a usable chattr +i")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


async def test_forget_in_read_only_data_dir_leaves_the_document(tmp_path: Path) -> None:
    """W4: doc_forget whose files cannot be removed fails before the forget record: the document stays whole."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=TEXT, doc_id="n")
        # The catalog stays writable (a running server keeps its journal open), the
        # document's folder does not: what `chmod -R a-w` on the data dir does to it.
        with _read_only(ctx.data.docs / "n"):
            with pytest.raises(StoreError, match="nothing was changed"):
                await ctx.documents.forget("n")
            assert [doc.doc_id for doc in await ctx.documents.list_documents()] == ["n"]
            assert (await ctx.documents.search("numbat")).hits
            window = await ctx.documents.window("n", budget_tokens=100_000)
            assert "".join(chunk.text for chunk in window.chunks) == TEXT
    async with opened(tmp_path) as ctx:
        assert [doc.doc_id for doc in await ctx.documents.list_documents()] == ["n"]
