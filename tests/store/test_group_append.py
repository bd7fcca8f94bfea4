"""Group commits: several journals written under their locks, then fsynced at once."""

from __future__ import annotations

import errno
import os
import threading
from typing import TYPE_CHECKING

from ctxtrio._errors import StoreError
from ctxtrio.store.journal import JournalAppender
from ctxtrio.store.reading import read_journal
from ctxtrio.store.records import NewRecord
from ctxtrio.store.results import AppendResult, JournalChangedError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import pytest


def _notes(*texts: str) -> list[NewRecord]:
    return [NewRecord("note", {"text": text}) for text in texts]


def _texts(path: Path) -> list[object]:
    return [record.data["text"] for record in read_journal(path).records]


def test_a_group_writes_each_journal_and_answers_in_item_order(tmp_path: Path) -> None:
    """Every journal of a group gets its own records and sequence numbers; outcomes follow the items."""
    (tmp_path / "new").mkdir()
    paths = [tmp_path / "b.jsonl", tmp_path / "a.jsonl", tmp_path / "new" / "c.jsonl"]
    appender = JournalAppender(lock_timeout_s=1.0)
    try:
        appender.append(paths[0], _notes("old"))
        outcomes = appender.append_group(
            [(paths[0], _notes("b1"), None), (paths[1], _notes("a1", "a2"), None), (paths[2], _notes("c1"), None)]
        )
    finally:
        appender.close()
    assert all(isinstance(outcome, AppendResult) for outcome in outcomes)
    assert [outcome.path for outcome in outcomes if isinstance(outcome, AppendResult)] == paths
    assert [_texts(path) for path in paths] == [["old", "b1"], ["a1", "a2"], ["c1"]]
    assert [record.seq for record in read_journal(paths[0]).records] == [1, 2]


def test_a_conditional_item_that_no_longer_holds_fails_alone(tmp_path: Path) -> None:
    """An item whose expect_end is stale gets JournalChangedError and writes nothing; the rest are written."""
    stale, other = tmp_path / "stale.jsonl", tmp_path / "other.jsonl"
    appender = JournalAppender(lock_timeout_s=1.0)
    try:
        first = appender.append(stale, _notes("one"))
        appender.append(stale, _notes("two"))
        outcomes = appender.append_group([(stale, _notes("late"), first.end), (other, _notes("fine"), None)])
    finally:
        appender.close()
    assert isinstance(outcomes[0], JournalChangedError) and isinstance(outcomes[1], AppendResult)
    assert _texts(stale) == ["one", "two"] and _texts(other) == ["fine"]


def test_a_failed_fsync_cuts_back_only_its_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal whose fsync fails is cut back to its size before the append and gets a StoreError;
    the others of the group are written, and the failed journal takes later appends normally."""
    bad, good = tmp_path / "bad.jsonl", tmp_path / "good.jsonl"
    appender = JournalAppender(lock_timeout_s=1.0)
    appender.append(bad, _notes("kept"))
    size = bad.stat().st_size
    real_fsync = os.fsync

    def failing_fsync(fd: int) -> None:
        # fsync(2): "EIO  An error occurred during synchronization" (the data may not be on disk).
        if os.fstat(fd).st_ino == bad.stat().st_ino:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    try:
        outcomes = appender.append_group([(bad, _notes("lost"), None), (good, _notes("safe"), None)])
        assert isinstance(outcomes[0], StoreError) and "Input/output error" in str(outcomes[0])
        assert isinstance(outcomes[1], AppendResult)
        assert bad.stat().st_size == size and _texts(bad) == ["kept"] and _texts(good) == ["safe"]
        monkeypatch.setattr(os, "fsync", real_fsync)
        appender.append(bad, _notes("later"))
    finally:
        appender.close()
    assert _texts(bad) == ["kept", "later"]
    assert [record.seq for record in read_journal(bad).records] == [1, 2]


def test_a_follow_up_is_built_from_the_written_items_and_written_after_them(tmp_path: Path) -> None:
    """A follow-up's records are built once the items are written (the failed ones given as errors),
    appended after them in the same group, and acknowledged with them."""
    good, stale, after = tmp_path / "good.jsonl", tmp_path / "stale.jsonl", tmp_path / "a-follow.jsonl"
    appender = JournalAppender(lock_timeout_s=1.0)
    seen: list[object] = []

    def build(results: Sequence[AppendResult | StoreError | None]) -> list[NewRecord]:
        seen.extend(type(result).__name__ for result in results)
        sizes = [good.stat().st_size, stale.stat().st_size]  # written already, not yet fsynced
        return [
            NewRecord("note", {"text": f"ends at {result.end}", "size": sizes[n]})
            for n, result in enumerate(results)
            if isinstance(result, AppendResult)
        ]

    try:
        first = appender.append(stale, _notes("one"))
        appender.append(stale, _notes("two"))
        outcomes = appender.append_group(
            [(good, _notes("g"), None), (stale, _notes("late"), first.end)], [(after, build)]
        )
    finally:
        appender.close()
    assert seen == ["AppendResult", "JournalChangedError"]
    assert isinstance(outcomes[0], AppendResult) and isinstance(outcomes[1], JournalChangedError)
    assert isinstance(outcomes[2], AppendResult)
    [record] = read_journal(after).records
    assert record.data["text"] == f"ends at {outcomes[0].end}" and record.data["size"] == outcomes[0].end


def test_the_calling_thread_takes_one_fsync_of_a_group_and_the_pool_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group's fsyncs run at once: one in the writer's own thread (a hand-off fewer), the others in the pool."""
    paths = [tmp_path / f"{name}.jsonl" for name in "abc"]
    appender = JournalAppender(lock_timeout_s=1.0)
    for path in paths:
        appender.append(path, _notes("first"))  # created: later groups fsync the files alone
    threads: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        threads.append(threading.current_thread().name)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    try:
        outcomes = appender.append_group([(path, _notes("more"), None) for path in paths])
    finally:
        appender.close()
    assert all(isinstance(outcome, AppendResult) for outcome in outcomes)
    assert len(threads) == 3 and threads.count(threading.current_thread().name) == 1
