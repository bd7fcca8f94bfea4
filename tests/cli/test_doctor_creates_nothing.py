"""doctor without --repair creates nothing: not the data dir, not its folders, no probe file; it asks whether it is writable."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxtrio.cli import aside
from ctxtrio.store.layout import prepare_data_dir

from .runner import cli

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def _paths(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


async def test_a_data_dir_that_does_not_exist_is_a_warning_not_created(tmp_path: Path) -> None:
    """A fresh install's data dir or a mistyped --data-dir: a warning naming it, the other checks go on, and no
    directory appears (--strict fails on it; --repair creates it)."""
    missing = tmp_path / "no-such-data-dir"
    plain = await cli(missing, "doctor")
    assert plain.code == 0, (plain.out, plain.err)
    assert f"warn data dir: {missing} does not exist: nothing is stored there" in plain.out
    assert "llm: off (--no-llm / CTX_LLM_ENABLED=false)" in plain.out
    assert not missing.exists()
    assert (await cli(missing, "doctor", "--strict")).code == 1
    assert not missing.exists()
    assert (await cli(missing, "doctor", "--repair")).code == 0
    assert missing.is_dir()


async def test_a_data_dir_that_is_a_file_is_said_to_be_one(tmp_path: Path) -> None:
    """--data-dir naming a file: doctor says BAD, it is a file (it said 'does not exist', a warning, exit 0),
    and a command that opens the store says so too (it said 'is not usable: File exists')."""
    afile = tmp_path / "notes.txt"
    afile.write_text("mine\n")
    plain = await cli(afile, "doctor")
    assert plain.code == 1 and f"BAD data dir: {afile} is a file, not a directory" in plain.out, plain
    for args in (("sessions",), ("docs",), ("doctor", "--repair")):
        ran = await cli(afile, *args)
        assert ran.code == 2 and f"data dir {afile} is not usable: it is a file, not a directory" in ran.err, ran
    assert afile.read_text() == "mine\n"


async def test_missing_folders_stay_missing_and_the_data_dir_is_not_written(tmp_path: Path) -> None:
    """A data dir without sessions/ and quarantine/: doctor says it is healthy and writable, adds no path,
    and writes no probe file into it (the directory's mtime is unchanged)."""
    data = prepare_data_dir(tmp_path / "data")
    data.sessions.rmdir()
    data.quarantine.rmdir()
    before = _paths(data.root)
    mtime = data.root.stat().st_mtime_ns
    plain = await cli(data.root, "doctor")
    assert plain.code == 0, plain.out
    assert f"ok  data dir: {data.root}: writable" in plain.out
    assert _paths(data.root) == before
    assert data.root.stat().st_mtime_ns == mtime


def test_a_read_only_file_system_is_a_bad_data_dir_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """statvfs says the mount is read-only: not ok, saying so, however much room there is."""
    data = prepare_data_dir(tmp_path / "data")
    real = os.statvfs(data.root)

    class ReadOnly:
        f_bavail = real.f_bavail
        f_frsize = real.f_frsize
        f_flag = real.f_flag | os.ST_RDONLY

    monkeypatch.setattr(os, "statvfs", lambda path: ReadOnly())
    ok, line = aside.free_space(data)
    assert not ok and "not writable (a read-only file system)" in line
