"""The session slice cache: durable steps, pending markers, torn lines skipped, removed when nothing waits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.memory.compaction.slices import SliceFile, slices_path

if TYPE_CHECKING:
    from pathlib import Path


async def test_steps_and_pending_marks_survive_a_reload(tmp_path: Path) -> None:
    """What one SliceFile puts, a fresh one loads; done marks cancel pending ones; the last done removes the file."""
    journal = tmp_path / "s.jsonl"
    first = SliceFile(journal)
    await first.put("k1", "slice one")
    await first.mark_pending("e7", 200)
    await first.mark_pending("e9", 300)
    await first.mark_done("e7")
    again = SliceFile(journal)
    await again.load()
    assert (again.get("k1"), again.get("k2"), again.pending) == ("slice one", None, {"e9": 300})
    await again.mark_done("e9")
    assert not slices_path(journal).exists() and again.get("k1") is None


async def test_a_torn_or_foreign_line_is_skipped(tmp_path: Path) -> None:
    """A crash mid-line, or a line of another shape, costs that line only."""
    journal = tmp_path / "s.jsonl"
    cache = SliceFile(journal)
    await cache.put("k1", "kept")
    with slices_path(journal).open("ab") as handle:
        handle.write(b'["not", "an", "object"]\n{"key": 3, "text": "x"}\n{"key": "k2", "te')
    loaded = SliceFile(journal)
    await loaded.load()
    assert (loaded.get("k1"), loaded.get("k2"), len(loaded)) == ("kept", None, 1)
    await loaded.put("k3", "after the tear")  # starts a line of its own
    reloaded = SliceFile(journal)
    await reloaded.load()
    assert reloaded.get("k3") == "after the tear" and len(reloaded) == 2


async def test_a_slice_file_that_is_a_symlink_is_neither_read_nor_written_through(tmp_path: Path) -> None:
    """sessions/<id>.slices made a symlink to another file: load sees nothing, put does not write to the target."""
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(b'{"key": "k", "text": "planted"}\n')
    journal = tmp_path / "s.jsonl"
    slices_path(journal).symlink_to(target)
    cache = SliceFile(journal)
    await cache.load()
    assert cache.get("k") is None
    await cache.put("k2", "kept in memory only")
    assert target.read_bytes() == b'{"key": "k", "text": "planted"}\n'
