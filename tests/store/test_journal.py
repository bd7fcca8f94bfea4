"""Journal files: recovery on load, locking and sequence numbers on append."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from ctxtrio._errors import StoreError
from ctxtrio.store import journal as journal_module
from ctxtrio.store.journal import JournalAppender
from ctxtrio.store.reading import read_journal
from ctxtrio.store.records import NewRecord
from ctxtrio.store.results import JournalChangedError

if TYPE_CHECKING:
    from pathlib import Path


def _append(path: Path, *texts: str) -> None:
    JournalAppender(lock_timeout_s=1.0).append(path, [NewRecord("note", {"text": t}) for t in texts])


def test_records_carry_envelope(tmp_path: Path) -> None:
    """Every record has schema version, kind, id, sequence number and timestamp."""
    path = tmp_path / "j.jsonl"
    _append(path, "a", "b")
    records = read_journal(path).records
    assert [r.data["text"] for r in records] == ["a", "b"]
    for number, record in enumerate(records, start=1):
        assert record.data["v"] == 1
        assert record.seq == number
        assert record.kind == "note"
        assert record.id == str(number)
        assert isinstance(record.data["ts"], float)


def test_torn_tail_is_skipped_and_counted(tmp_path: Path) -> None:
    """An incomplete final line (a crash mid-write) is skipped and its bytes counted."""
    path = tmp_path / "j.jsonl"
    _append(path, "kept")
    with open(path, "ab") as handle:
        handle.write(b'{"v":1,"seq":2,"kind":"no')
    result = read_journal(path)
    assert [r.data["text"] for r in result.records] == ["kept"]
    assert result.torn_tail_bytes == len(b'{"v":1,"seq":2,"kind":"no')
    assert result.quarantined == []


def test_garbage_middle_line_is_quarantined(tmp_path: Path) -> None:
    """A malformed line between good ones is skipped, reported, and copied to quarantine once."""
    path = tmp_path / "j.jsonl"
    quarantine = tmp_path / "q"
    quarantine.mkdir()
    _append(path, "first")
    with open(path, "ab") as handle:
        handle.write(b"not json at all\n")
        handle.write(b"\xff\xfe not utf-8\n")
    _append(path, "last")
    result = read_journal(path, quarantine_dir=quarantine)
    assert [r.data["text"] for r in result.records] == ["first", "last"]
    assert len(result.quarantined) == 2
    copies = sorted(quarantine.iterdir())
    assert len(copies) == 2
    read_journal(path, quarantine_dir=quarantine)
    assert sorted(quarantine.iterdir()) == copies


def test_append_after_torn_tail_terminates_it(tmp_path: Path) -> None:
    """A new append after a crash never merges with the torn fragment; seq continues."""
    path = tmp_path / "j.jsonl"
    _append(path, "one")
    with open(path, "ab") as handle:
        handle.write(b'{"v":1,"seq":2,"ki')
    _append(path, "two")
    result = read_journal(path)
    assert [(r.seq, r.data["text"]) for r in result.records] == [(1, "one"), (2, "two")]
    assert len(result.quarantined) == 1


def test_appender_sees_lines_of_another_appender(tmp_path: Path) -> None:
    """Sequence numbers continue across appenders that share a file (as processes do)."""
    path = tmp_path / "j.jsonl"
    first, second = JournalAppender(lock_timeout_s=1.0), JournalAppender(lock_timeout_s=1.0)
    first.append(path, [NewRecord("n", {"text": "a"})])
    result = second.append(path, [NewRecord("n", {"text": "b"})])
    assert [r.seq for r in result.records] == [2]
    assert [r.data["text"] for r in result.foreign] == ["a"]
    third = first.append(path, [NewRecord("n", {"text": "c"})])
    assert [r.seq for r in third.records] == [3]


def test_lock_held_by_other_process_times_out(tmp_path: Path) -> None:
    """An append waits a bounded time for a lock held elsewhere, then fails clearly."""
    import fcntl

    path = tmp_path / "j.jsonl"
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        appender = JournalAppender(lock_timeout_s=0.2)
        with pytest.raises(StoreError, match="locked by another process"):
            appender.append(path, [NewRecord("n", {"text": "x"})])
    finally:
        os.close(fd)
    assert read_journal(path).records == []


class StepClock:
    """A thread clock whose sleeps advance it at once (no real waiting), and that records them."""

    def __init__(self) -> None:
        self.time = 100.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.time

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.time += seconds


def test_lock_wait_runs_on_the_injected_clock(tmp_path: Path) -> None:
    """The lock wait backs off on the appender's clock: doubling pauses capped at 50 ms, giving up at the timeout."""
    import fcntl

    path = tmp_path / "j.jsonl"
    path.write_bytes(b"")
    fd = os.open(path, os.O_RDWR)
    clock = StepClock()
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        appender = JournalAppender(lock_timeout_s=30.0, clock=clock)
        with pytest.raises(StoreError, match="stayed locked by another process for 30 s"):
            appender.append(path, [NewRecord("n", {"text": "x"})])
    finally:
        os.close(fd)
    assert clock.sleeps[:3] == [0.0005, 0.001, 0.002] and max(clock.sleeps) == 0.05
    assert 30.0 <= sum(clock.sleeps) < 30.05 and clock.time == pytest.approx(100.0 + sum(clock.sleeps))


def test_unreadable_journal_is_a_clear_error(tmp_path: Path) -> None:
    """A journal that cannot be read raises StoreError naming the file."""
    if os.geteuid() == 0:
        path = tmp_path / "dir.jsonl"
        path.mkdir()  # root ignores permissions; a directory is unreadable as a file for anyone
    else:
        path = tmp_path / "j.jsonl"
        path.write_bytes(b"")
        path.chmod(0)
    with pytest.raises(StoreError, match=str(path.name)):
        read_journal(path)


def test_read_only_dir_append_fails_without_loss(tmp_path: Path) -> None:
    """Appending where the journal cannot be opened raises StoreError and changes nothing."""
    path = tmp_path / "sub" / "j.jsonl"  # parent does not exist: open fails for root too
    with pytest.raises(StoreError, match="cannot open journal"):
        _append(path, "x")
    assert not path.exists()


def test_missing_folder_is_made_under_folders_in_and_its_entry_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A journal's missing folder directly under ``folders_in`` is made; that folder and its parent are fsynced."""
    synced: list[Path] = []
    monkeypatch.setattr(journal_module, "_fsync_dir", synced.append)
    path = tmp_path / "doc-a" / "gen.jsonl"
    JournalAppender(lock_timeout_s=1.0, folders_in=[tmp_path]).append(path, [NewRecord("note", {"text": "x"})])
    assert [r.data["text"] for r in read_journal(path).records] == ["x"]
    assert sorted(synced) == sorted([tmp_path, tmp_path / "doc-a"])
    deeper = tmp_path / "doc-b" / "sub" / "gen.jsonl"  # only one level, only under folders_in
    with pytest.raises(StoreError, match="cannot open journal"):
        JournalAppender(lock_timeout_s=1.0, folders_in=[tmp_path]).append(deeper, [NewRecord("note", {"text": "x"})])


def test_non_utf8_and_unicode_text_round_trip(tmp_path: Path) -> None:
    """Any Unicode text is stored and read back exactly."""
    path = tmp_path / "j.jsonl"
    texts = ["회의에서 결정했다", "数据库连接失败", "Müller\u0301", "emoji 🧠", "line\nbreak"]
    _append(path, *texts)
    assert [r.data["text"] for r in read_journal(path).records] == texts
    for line in path.read_bytes().splitlines():
        json.loads(line)


def test_conditional_append_writes_only_at_the_expected_end(tmp_path: Path) -> None:
    """append(expect_end=...) writes when the journal still ends there, and refuses (writing
    nothing) once another appender added a line; a torn fragment past the end does not count."""
    path = tmp_path / "j.jsonl"
    mine, other = JournalAppender(lock_timeout_s=1.0), JournalAppender(lock_timeout_s=1.0)
    end = mine.append(path, [NewRecord("n", {"text": "a"})]).end
    end = mine.append(path, [NewRecord("n", {"text": "b"})], expect_end=end).end
    other.append(path, [NewRecord("n", {"text": "c"})])
    with pytest.raises(JournalChangedError):
        mine.append(path, [NewRecord("n", {"text": "late"})], expect_end=end)
    assert [r.data["text"] for r in read_journal(path).records] == ["a", "b", "c"]
    end = read_journal(path).end
    with open(path, "ab") as handle:
        handle.write(b'{"v":1,"kind":"n","te')  # a crash mid-line
    mine.append(path, [NewRecord("n", {"text": "d"})], expect_end=end)
    assert [r.data["text"] for r in read_journal(path).records] == ["a", "b", "c", "d"]


def test_an_append_says_what_a_replayed_state_absorbs(tmp_path: Path) -> None:
    """to_absorb: nothing if already read past it, its records if the state ends where it began, else re-read."""
    path = tmp_path / "j.jsonl"
    appender = JournalAppender(lock_timeout_s=1.0)
    first = appender.append(path, [NewRecord("note", {"text": "a"})])
    second = appender.append(path, [NewRecord("note", {"text": "b"}), NewRecord("note", {"text": "c"})])
    assert second.to_absorb(second.end) == []
    assert second.to_absorb(first.end) == second.records and len(second.records) == 2
    assert second.to_absorb(first.start) is None  # the first append lies in between: re-read
    assert second.to_absorb(second.records[1].offset) is None  # part of it read: re-read, never apply twice
