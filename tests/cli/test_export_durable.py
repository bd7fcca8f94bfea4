"""An export file is durable once ``ctxtrio export -o FILE`` says so: its bytes, then its name."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from ctxtrio.cli import transfer

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_the_export_and_then_its_folder_are_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is fsynced before it is renamed into place, and its folder after (the rename lives in the
    folder: without that fsync a crash after a following prune may leave the pruned data and no export)."""
    target = tmp_path / "sessions.jsonl"
    synced: list[tuple[str, bool]] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            synced.append(("folder" if info.st_ino == tmp_path.stat().st_ino else "other folder", target.exists()))
        else:
            synced.append(("file", target.exists()))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    transfer._write_atomically(target, '{"ctxtrio_export": 1}\n')
    assert target.read_text() == '{"ctxtrio_export": 1}\n'
    assert synced == [("file", False), ("folder", True)]


def test_the_export_is_private_and_written_through_no_planted_symlink(tmp_path: Path) -> None:
    """The export holds the data dir's private notes, so it is 0600 like them, under the usual umask 022
    (it was 0644); a symlink planted at the temporary's old name (``.NAME.partial-PID``) or at FILE itself
    leaves the file it points to as it was (the old open(temporary, "w") wrote the export through it)."""
    target = tmp_path / "sessions.jsonl"
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (tmp_path / f".{target.name}.partial-{os.getpid()}").symlink_to(victim)
    previous = os.umask(0o022)
    try:
        transfer._write_atomically(target, '{"ctxtrio_export": 1}\n')
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert victim.read_text() == "keep me\n"
        target.unlink()
        target.symlink_to(victim)
        transfer._write_atomically(target, '{"ctxtrio_export": 1}\n')
    finally:
        os.umask(previous)
    assert not target.is_symlink() and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert victim.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir() if "partial" in p.name) == [
        f".{target.name}.partial-{os.getpid()}"
    ]
