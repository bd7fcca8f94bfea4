"""``ctxtrio ingest FOLDER`` reads each file once: the precheck's read is what the service stores.

Driven in-process (``ingest_command``) so a test can change a file between the precheck
and the ingest, and count the sandbox's reads.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest
import trio

import ctxtrio.cli.ingest as cli_ingest
import ctxtrio.docs.sandbox as sandbox
import ctxtrio.docs.service as docs_service
from ctxtrio._config import Config
from ctxtrio._errors import IngestError
from ctxtrio._wiring import open_wiring
from ctxtrio.cli.run import build_parser
from ctxtrio.docs.arguments import read_file
from ctxtrio.docs.ingest import text_digest
from ctxtrio.docs.service import DocumentService
from ctxtrio.store.layout import prepare_data_dir
from ctxtrio.text.kinds import Kind
from ctxtrio.text.kinds import kind_for as real_kind_for

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ctxtrio.docs.model import DocumentInfo

A = "# Notes\n\nversion A of the notes, as the precheck read it.\n"
B = "# Notes\n\nversion B, written after the precheck.\n"


def _config(tmp_path: Path, root: Path) -> Config:
    return Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False, ingest_roots=(root,))


async def _ingest(tmp_path: Path, folder: Path) -> int:
    """``ctxtrio ingest FOLDER --json`` in this process (roots derived from the folder, as the command does)."""
    config = Config(data_dir=tmp_path / "data", llm_enabled=False, audit=False)
    args = build_parser("ingest").parse_args([str(folder), "--json"])
    prepare_data_dir(config.data_dir)  # as the command line does before it opens the library
    return await cli_ingest.ingest_command(config, args, trio.CancelScope())


async def _documents(tmp_path: Path, root: Path) -> dict[str, DocumentInfo]:
    async with open_wiring(_config(tmp_path, root)) as ctx:
        return {info.source: info for info in await ctx.documents.list_documents()}


def _after_precheck(monkeypatch: pytest.MonkeyPatch, change: Callable[[], object]) -> None:
    """Run ``change`` once, right after the first batch's precheck read the files."""
    real = cli_ingest.precheck
    changed: list[bool] = []

    def precheck(batch: list[tuple[Path, int]], roots: tuple[Path, ...], limit: int) -> list[cli_ingest.Checked]:
        checked = real(batch, roots, limit)
        if not changed:
            changed.append(True)
            change()
        return checked

    monkeypatch.setattr(cli_ingest, "precheck", precheck)


async def test_a_file_changed_after_the_precheck_is_stored_as_read_then_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One read decides "unchanged" and is what is stored: the text read and checked, with its own hash (the
    service read the file again, so a file changed in between was stored in a version the precheck never saw).
    The next run finds the file changed and replaces the document."""
    folder = tmp_path / "docs"
    folder.mkdir()
    notes = folder / "notes.md"
    notes.write_text(A)
    _after_precheck(monkeypatch, lambda: notes.write_text(B))
    assert await _ingest(tmp_path, folder) == 0
    stored = (await _documents(tmp_path, folder))[str(notes)]
    assert stored.content_hash == text_digest(A)
    monkeypatch.undo()
    assert await _ingest(tmp_path, folder) == 0
    again = (await _documents(tmp_path, folder))[str(notes)]
    assert again.doc_id == stored.doc_id and again.content_hash == text_digest(B)


async def test_a_symlink_out_of_the_folder_swapped_in_after_the_precheck_reads_nothing_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is stored was read inside the folder: a link to a secret swapped in meanwhile is never read."""
    folder = tmp_path / "docs"
    folder.mkdir()
    notes, secret = folder / "notes.md", tmp_path / "secret.txt"
    notes.write_text(A)
    secret.write_text("a secret outside the folder\n")

    def swap() -> None:
        notes.unlink()
        notes.symlink_to(secret)

    _after_precheck(monkeypatch, swap)
    assert await _ingest(tmp_path, folder) == 0
    stored = await _documents(tmp_path, folder)
    assert text_digest(secret.read_text()) not in {info.content_hash for info in stored.values()}
    assert stored[str(notes)].content_hash == text_digest(A)
    monkeypatch.undo()
    assert await _ingest(tmp_path, folder) == 0  # refused now, by name; the document read before stays
    assert (await _documents(tmp_path, folder))[str(notes)].content_hash == text_digest(A)


@pytest.mark.parametrize("keep_chars", [cli_ingest.PRECHECK_KEEP_CHARS, 1])
async def test_each_file_is_read_once_unless_past_the_kept_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep_chars: int
) -> None:
    """Each file goes through the sandbox's read once (it was twice: the precheck's, then the service's).
    Past PRECHECK_KEEP_CHARS of a batch a file's text is not kept: the service reads it again, and stores it."""
    folder = tmp_path / "docs"
    folder.mkdir()
    texts = {f"f{i}.md": f"# File {i}\n\nwords of file {i}\n" for i in range(5)}
    for name, text in texts.items():
        (folder / name).write_text(text)
    (folder / "empty.md").write_text("\n")
    real = sandbox._read_checked  # the one place a file's bytes are read
    reads: list[Path] = []

    def counted(resolved: Path, root: Path, max_bytes: int) -> str:
        reads.append(resolved)
        return real(resolved, root, max_bytes)

    monkeypatch.setattr(sandbox, "_read_checked", counted)
    monkeypatch.setattr(cli_ingest, "PRECHECK_KEEP_CHARS", keep_chars)
    assert await _ingest(tmp_path, folder) == 0
    again = len(texts) - 1 if keep_chars == 1 else 0  # the first file of the batch is kept whatever its size
    assert len(reads) == len(texts) + 1 + again
    stored = await _documents(tmp_path, folder)
    assert {os.path.basename(source): info.content_hash for source, info in stored.items()} == {
        name: text_digest(text) for name, text in texts.items()
    }


async def test_a_read_made_under_other_roots_is_read_again_under_the_services(tmp_path: Path) -> None:
    """ingest_read takes a read only when it was made under the service's own roots and limit: one made under
    a wider root is read again, so a file outside the service's roots is refused as doc_ingest refuses it."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("a secret outside the root\n")
    (root / "inside.md").write_text(A)
    async with open_wiring(_config(tmp_path, root)) as ctx:
        wide = read_file(str(outside / "secret.md"), (tmp_path,), ctx.config.max_ingest_chars)
        with pytest.raises(IngestError, match="outside the ingest roots"):
            await ctx.documents.ingest_read(str(outside / "secret.md"), wide)
        bigger = read_file(str(root / "inside.md"), (root,), ctx.config.max_ingest_chars + 1)
        (root / "inside.md").write_text(B)
        result = await ctx.documents.ingest_read(str(root / "inside.md"), bigger)
        assert result.doc.content_hash == text_digest(B)  # read again, under this service's limit
        own = read_file(str(root / "inside.md"), (root,), ctx.config.max_ingest_chars)
        assert (await ctx.documents.ingest_read(str(root / "inside.md"), own)).unchanged


async def test_a_kept_read_is_looked_up_once_and_an_unchanged_file_is_not_sniffed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file whose read is kept is looked up by ingest_read alone, under its source's lock (the command asked
    unchanged_file first: one catalog refresh more per changed file, often a worker-thread read); a rerun still
    reports each file unchanged, and an unchanged file's kind is not sniffed."""
    folder = tmp_path / "docs"
    folder.mkdir()
    names = [f"f{i}.txt" for i in range(3)]
    for name in names:
        (folder / name).write_text(f"notes of {name}\n")
    asked: list[str] = []

    async def unchanged_file(self: DocumentService, file_path: str, source: str, digest: str) -> DocumentInfo | None:
        asked.append(file_path)
        return None

    sniffed: list[str | None] = []

    def kind_for(text: str, *names: str | None) -> Kind:
        sniffed.append(names[0])
        return real_kind_for(text, *names)

    monkeypatch.setattr(DocumentService, "unchanged_file", unchanged_file)
    monkeypatch.setattr(docs_service, "kind_for", kind_for)
    assert await _ingest(tmp_path, folder) == 0
    first = json.loads(capsys.readouterr().out)
    assert sorted(os.path.basename(item["path"]) for item in first["ingested"]) == names
    assert len(sniffed) == 3
    sniffed.clear()
    assert await _ingest(tmp_path, folder) == 0
    again = json.loads(capsys.readouterr().out)
    assert sorted(os.path.basename(item["path"]) for item in again["unchanged"]) == names
    assert again["ingested"] == again["replaced"] == []
    assert asked == [] and sniffed == []
