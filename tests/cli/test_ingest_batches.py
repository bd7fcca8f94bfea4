"""``ctxtrio ingest FOLDER`` runs big files side by side, within a bound of bytes in flight.

A precheck batch settles its files in turn: a folder of up to 32 files was one batch, so a few
big files were ingested one at a time. Batches now also end at PRECHECK_BYTES, and the batches in
flight hold at most IN_FLIGHT_BYTES (one larger batch runs alone).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

import ctxtrio.cli.ingest as cli_ingest
from ctxtrio.docs.service import DocumentService

from .test_ingest_reads import _ingest

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from ctxtrio.docs.arguments import FileRead
    from ctxtrio.docs.model import IngestResult


async def test_big_files_run_side_by_side_within_the_bytes_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five files past PRECHECK_BYTES are ingested two at a time when two fit IN_FLIGHT_BYTES (they were
    one batch, one at a time), and a file larger than IN_FLIGHT_BYTES is ingested with no other."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in "abcde":
        (folder / f"{name}.md").write_text(f"# {name}\n\n" + f"words of {name} " * 10)  # 115 bytes: two fit 300
    (folder / "z.md").write_text("# z\n\n" + "words of z " * 30)
    monkeypatch.setattr(cli_ingest, "PRECHECK_BYTES", 100)
    monkeypatch.setattr(cli_ingest, "IN_FLIGHT_BYTES", 300)
    real = DocumentService.ingest_read
    in_flight: set[str] = set()
    peaks: dict[str, int] = {}
    paired = trio.Event()  # the first ingest waits for a second: one at a time never gets past it

    async def ingest_read(self: DocumentService, file_path: str, read: FileRead) -> IngestResult:
        in_flight.add(file_path)
        if len(in_flight) >= 2:
            paired.set()
        await paired.wait()
        peaks[file_path] = len(in_flight)
        await trio.testing.wait_all_tasks_blocked()  # the others that may start now have started
        peaks[file_path] = max(peaks[file_path], len(in_flight))
        try:
            return await real(self, file_path, read)
        finally:
            in_flight.discard(file_path)

    monkeypatch.setattr(DocumentService, "ingest_read", ingest_read)
    with trio.fail_after(30):  # (a guard against hanging, not a timing)
        assert await _ingest(tmp_path, folder) == 0
    assert max(peaks.values()) == 2
    assert peaks[str(folder / "z.md")] == 1
    assert len(peaks) == 6
