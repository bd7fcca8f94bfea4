"""store/room.room_to_rebuild counts the document journals only as far as the disk's free room: a shelved
index asks at every index flush and search, and on a disk without room for it the answer needs none or few."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.store import room
from ctxtrio.store.layout import DataDir
from ctxtrio.store.reading import journal_size
from ctxtrio.store.room import REBUILD_FACTOR, ROOM_KEPT_BYTES, rebuild_needs_bytes, room_to_rebuild
from testkit.disk import fill_disk, free_bytes
from tests.store.test_disk_full import small_tmpfs

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import pytest

#: Journals of 4 KB, in a folder each, as ingests leave them (docs/<doc>/<gen>.jsonl).
JOURNALS = 200
JOURNAL_BYTES = 4096


def _journals(data: DataDir) -> None:
    for n in range(JOURNALS):
        folder = data.docs / f"doc{n:04d}"
        folder.mkdir(parents=True)
        (folder / "g1.jsonl").write_bytes(b"x" * (JOURNAL_BYTES - 1) + b"\n")


def _stats(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the journals room.py counts (read by the real walk of docs/)."""
    counted: list[int] = []
    walk = room._journal_sizes

    def counting(docs: Path) -> Iterator[int]:
        for size in walk(docs):
            counted.append(size)
            yield size

    monkeypatch.setattr(room, "_journal_sizes", counting)
    return counted


def test_the_walk_counts_what_glob_found(tmp_path: Path) -> None:
    """The walk of docs/ sizes the files Path.glob("*/*.jsonl") found, hidden names too, and nothing else."""
    data = DataDir(tmp_path / "data")
    _journals(data)
    (data.docs / ".hidden").mkdir()
    (data.docs / ".hidden" / "g.jsonl").write_bytes(b"1\n")
    (data.docs / "doc0000" / ".g2.jsonl").write_bytes(b"22\n")
    (data.docs / "doc0000" / "notes.txt").write_bytes(b"333\n")
    (data.docs / "top.jsonl").write_bytes(b"4444\n")
    globbed = sorted(journal_size(path) for path in data.docs.glob("*/*.jsonl"))
    assert sorted(room._journal_sizes(data.docs)) == globbed
    assert len(globbed) == JOURNALS + 2
    assert list(room._journal_sizes(tmp_path / "none")) == []


def test_counting_stops_once_the_journals_ask_more_than_the_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked beside a room under the fixed part, no journal is counted; beside a room that 10 journals' worth
    passes, 11 or 12 are; beside one all of them fit in, every one, and the answer is the whole count's."""
    data = DataDir(tmp_path / "data")
    _journals(data)
    whole = rebuild_needs_bytes(data)
    assert whole >= REBUILD_FACTOR * JOURNALS * JOURNAL_BYTES
    asked = _stats(monkeypatch)
    assert rebuild_needs_bytes(data, more_than=ROOM_KEPT_BYTES - 1) > ROOM_KEPT_BYTES - 1
    assert asked == []
    some = rebuild_needs_bytes(data, more_than=ROOM_KEPT_BYTES + 10 * (REBUILD_FACTOR + 6) * JOURNAL_BYTES)
    assert some > ROOM_KEPT_BYTES + 10 * (REBUILD_FACTOR + 6) * JOURNAL_BYTES
    assert 10 < len(asked) <= 12
    asked.clear()
    assert rebuild_needs_bytes(data, more_than=whole) == whole
    assert len(asked) == JOURNALS


def test_a_full_disk_is_told_without_counting_the_journals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a full 16 MB tmpfs holding 200 journals, room_to_rebuild says no and counts none of them (before: all
    200, at every try); once the filler is gone, yes, having counted every one."""
    with small_tmpfs(tmp_path / "mnt", "16m") as mount:
        data = DataDir(mount / "data")
        _journals(data)
        fill_disk(mount / "filler")
        assert free_bytes(mount) < ROOM_KEPT_BYTES
        asked = _stats(monkeypatch)
        assert not room_to_rebuild(data)
        assert asked == []
        (mount / "filler").unlink()
        assert room_to_rebuild(data)
        assert len(asked) == JOURNALS
