"""The SQLite files of the data dir (the index, the vectors files) and their -wal and -shm are
readable by their owner alone, as the journals are, also in a data dir that others can enter."""

from __future__ import annotations

import contextlib
import os
import stat
from typing import TYPE_CHECKING

import pytest

import ctxtrio
from ctxtrio.store import vector_schema
from ctxtrio.store.layout import private_file

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The umask most systems give a user (022): SQLite's own 0644 then stays 0644."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _modes(path: Path) -> dict[str, int]:
    """Mode bits of ``path`` and of its -wal and -shm (those that exist)."""
    return {
        f"{path.name}{suffix}": stat.S_IMODE(os.stat(f"{path}{suffix}").st_mode)
        for suffix in ("", "-wal", "-shm")
        if os.path.exists(f"{path}{suffix}")
    }


@pytest.mark.usefixtures("usual_umask")
async def test_the_index_is_private_in_a_data_dir_others_can_enter(tmp_path: Path) -> None:
    """A data dir made 0755 before ctxtrio first used it: the index holding every document's text is
    0600, and so are its -wal and -shm while a server has it open (SQLite made them 0644)."""
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    config = ctxtrio.Config(data_dir=data, llm_enabled=False, audit=False)
    async with ctxtrio.open_context(config) as ctx:
        await ctx.documents.ingest(text="# Notes\n\nThe vault code is 1234.\n", title="notes")
        assert (await ctx.documents.search("vault")).hits
        modes = _modes(data / "index.sqlite3")
    assert set(modes) == {"index.sqlite3", "index.sqlite3-wal", "index.sqlite3-shm"}
    assert modes == dict.fromkeys(modes, 0o600)


@pytest.mark.usefixtures("usual_umask")
def test_a_vectors_file_is_private(tmp_path: Path) -> None:
    """A vectors file (embeddings of a session's entries: much of a text can be read back from its
    vector) is created 0600, with its -wal and -shm."""
    path = tmp_path / "session-vectors.sqlite3"
    with contextlib.closing(vector_schema.connect(path)) as conn:
        conn.execute("CREATE TABLE probe (x)")
        modes = _modes(path)
    assert set(modes) == {path.name, f"{path.name}-wal", f"{path.name}-shm"}
    assert modes == dict.fromkeys(modes, 0o600)


@pytest.mark.usefixtures("usual_umask")
def test_an_existing_file_keeps_its_bytes_and_mode(tmp_path: Path) -> None:
    """private_file creates a missing file only: one that is there is not truncated nor made private."""
    path = tmp_path / "index.sqlite3"
    path.write_bytes(b"kept")
    path.chmod(0o640)
    private_file(path)
    assert path.read_bytes() == b"kept"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
