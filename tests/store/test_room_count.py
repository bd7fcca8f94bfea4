"""store/room.room_to_rebuild counts the document journals only as far as the disk's free room: a shelved
index asks at every index flush and search, and on a disk without room for it the answer needs none or few."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.store import room
from ctxtrio.store.index import SearchIndex
from ctxtrio.store.index_flush import reindex_documents
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
    """The walk of docs/ sizes the files Path.glob("*/*.jsonl") found in real folders, hidden names too, and
    nothing else."""
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


class _Indexed(SearchIndex):
    """The real index, noting the bytes of each journal a rebuild catches up."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.sizes: list[int] = []

    def catch_up(self, journal: str, path: Path, size: int) -> int:
        self.sizes.append(size)
        return super().catch_up(journal, path, size)


def test_the_room_asked_for_a_rebuild_counts_the_journals_it_indexes(tmp_path: Path) -> None:
    """A folder of docs/ that is a symlink (to a folder of 1 MB of journals outside the data dir) is passed
    over by the rebuild (store/index_flush.reindex_documents) and by the room asked for it alike: the room is
    asked for exactly the journals the rebuild indexes. Before, the room counted the linked folder's journals
    too (Path.glob, and then os.scandir's is_dir(), followed the link): 13.2 MB asked for a rebuild of 7.6."""
    data = DataDir(tmp_path / "data")
    _journals(data)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "g1.jsonl").write_bytes(b"y" * ((1 << 20) - 1) + b"\n")
    (data.docs / "linked").symlink_to(outside, target_is_directory=True)
    index = _Indexed(data.index_path)
    try:
        assert index.open()
        reindex_documents(data, index)
    finally:
        index.close()
    assert len(index.sizes) == JOURNALS
    assert rebuild_needs_bytes(data) == room._asked(sum(index.sizes))


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
