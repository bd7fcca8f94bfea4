"""DataDir: the paths inside one data dir."""

from __future__ import annotations

from pathlib import Path

from ctxtrio.store.layout import DataDir


def test_the_folders_every_append_asks_for_are_made_once() -> None:
    """docs and sessions are the same objects on every call (a property built them each time: three
    times a document an ingest); a DataDir still equals, hashes and shows as its root alone."""
    data = DataDir(Path("/data"))
    assert data.docs is data.docs and data.sessions is data.sessions
    assert (data.docs, data.sessions) == (Path("/data/docs"), Path("/data/sessions"))
    assert data == DataDir(Path("/data")) and hash(data) == hash(DataDir(Path("/data")))
    assert repr(data) == f"DataDir(root={Path('/data')!r})"
