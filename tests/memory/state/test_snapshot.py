"""Session snapshots: derived, caught up from their offset, never trusted over the journal."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import pytest

import ctxtrio
from ctxtrio._wiring import open_wiring
from ctxtrio.memory.sessions import repository
from ctxtrio.memory.state import snapshot as snapshots
from ctxtrio.memory.state.snapshot import snapshot_path
from ctxtrio.text.tokens import TokenModel

from ..test_service import config

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio._context import Context
    from ctxtrio.memory import Entry, RecallResult, SessionStatus


@pytest.fixture(autouse=True)
def snapshot_often(monkeypatch: pytest.MonkeyPatch) -> None:
    """Write a snapshot whenever a session moved at all (the real threshold is 64-512 KB)."""
    monkeypatch.setattr(repository, "snapshot_due", lambda applied, snapshot, most: applied > snapshot)


async def view(ctx: Context, session_id: str = "s1") -> tuple[list[Entry], SessionStatus, RecallResult]:
    sessions = ctx.sessions
    return (
        await sessions.export(session_id),
        await sessions.status(session_id),
        await sessions.recall(session_id, "fact value cookie"),
    )


async def fill(ctx: Context, count: int = 12, session_id: str = "s1") -> None:
    for n in range(count):
        await ctx.sessions.append(session_id, f"fact {n}: value {n * n} cookie", tags=["x"] if n % 3 else None)
    await ctx.sessions.update(session_id, "e3", pinned=True)
    await ctx.sessions.update(session_id, "e5", delete=True)
    await ctx.sessions.compact(session_id, keep_recent=3)


async def test_a_restart_loads_the_snapshot_and_equals_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a snapshot restores (entries, pins, deletes, folds, search) equals a full replay."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        await fill(ctx)
        before = await view(ctx)
    path = snapshot_path(tmp_path / "data" / "sessions" / "s1.jsonl")
    assert path.exists()
    loaded: list[bool] = []
    real = snapshots.load_snapshot

    def spy(*args: object, **kwargs: object) -> object:
        state = real(*args, **kwargs)  # type: ignore[arg-type]  # forwarding the real signature
        loaded.append(state is not None)
        return state

    monkeypatch.setattr(repository, "load_snapshot", spy)
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        assert await view(ctx) == before
    assert loaded == [True]
    path.unlink()
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        assert await view(ctx) == before


async def test_compaction_stays_reversible_after_a_snapshot(tmp_path: Path) -> None:
    """Restoring a summary loaded from a snapshot brings the folded entries back."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        await fill(ctx)
        summary = [e for e in await ctx.sessions.export("s1") if e.folds][0]
        live_before = (await ctx.sessions.status("s1")).live_entries
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        undone = await ctx.sessions.update("s1", summary.id, restore=True)
        assert set(undone.restored) == set(summary.folds)
        assert undone.status.live_entries == live_before - 1 + len(summary.folds)
        found = await ctx.sessions.recall("s1", "value 0")
        assert "e2" in [entry.id for entry in found.entries]


@pytest.mark.parametrize("damage", ["flip", "truncate", "header", "empty"])
async def test_a_damaged_snapshot_is_ignored_and_rebuilt(tmp_path: Path, damage: str) -> None:
    """A corrupt, cut, garbled or empty snapshot is never trusted: the journal is replayed."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        await fill(ctx)
        before = await view(ctx)
    path = snapshot_path(tmp_path / "data" / "sessions" / "s1.jsonl")
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[-3] ^= 0x55
    elif damage == "truncate":
        del data[len(data) // 2 :]
    elif damage == "header":
        data[:1] = b"["
    else:
        data.clear()
    path.write_bytes(bytes(data))
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        assert await view(ctx) == before
    assert path.read_bytes() != bytes(data)  # rewritten from the journal


async def test_a_replaced_journal_makes_the_snapshot_stale(tmp_path: Path) -> None:
    """A journal replaced by other content (another inode) is replayed, not read through the old snapshot."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        await fill(ctx, session_id="s1")
        await fill(ctx, count=20, session_id="s2")
        expected = await view(ctx, "s2")
    sessions = tmp_path / "data" / "sessions"
    shutil.copy(sessions / "s2.jsonl", sessions / "s1.new")
    os.replace(sessions / "s1.new", sessions / "s1.jsonl")
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        entries, status, recalled = await view(ctx, "s1")
    assert entries == expected[0] and status.live_entries == expected[1].live_entries
    assert [e.id for e in recalled.entries] == [e.id for e in expected[2].entries]


async def test_appends_by_another_process_are_caught_up(tmp_path: Path) -> None:
    """A snapshot written by one process is caught up with lines another appended after it."""
    async with ctxtrio.open_context(config(tmp_path)) as a, ctxtrio.open_context(config(tmp_path)) as b:
        await fill(a)
        await a.sessions.status("s1")  # a writes its snapshot
        await b.sessions.append("s1", "late cookie from b")
        expected = await view(b)
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        got = await view(ctx)
    assert got == expected and got[0][-1].text == "late cookie from b"


async def test_a_snapshot_from_another_token_model_is_recounted(tmp_path: Path) -> None:
    """Token counts in a snapshot made with another model are recounted with the current one."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        await fill(ctx)
        cold = (await ctx.sessions.status("s1")).live_tokens
    async with open_wiring(config(tmp_path)) as ctx:
        ctx.live.tokens.current = TokenModel.flat(1.0)
        dense = await ctx.sessions.status("s1")
    assert dense.live_tokens > cold and "1 tokens/char" in dense.token_source


def test_snapshots_are_due_after_an_eighth_of_the_journal_within_bounds() -> None:
    """Rewritten after 64 KB at least, an eighth of the journal, and 512 KB at most."""
    kb = 1024
    assert not snapshots.snapshot_due(60 * kb, 0) and snapshots.snapshot_due(64 * kb, 0)
    assert not snapshots.snapshot_due(1000 * kb, 900 * kb) and snapshots.snapshot_due(1000 * kb, 870 * kb)
    assert snapshots.snapshot_due(100_000 * kb, 99_488 * kb) and not snapshots.snapshot_due(100_000 * kb, 99_489 * kb)


async def test_a_snapshot_overwritten_under_a_running_server_changes_no_answer_and_no_later_snapshot(
    tmp_path: Path,
) -> None:
    """Bytes of a loaded snapshot overwritten in place: answers stay the journal's, and the next snapshot written carries no damage."""
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        await fill(ctx)
    journal = tmp_path / "data" / "sessions" / "s1.jsonl"
    path = snapshot_path(journal)
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        before = await view(ctx)  # loaded from the snapshot
        size = path.stat().st_size
        with open(path, "r+b") as handle:  # the same file, damaged in place (texts are near the middle)
            handle.seek(size // 3)
            handle.write(b"X" * (size // 3))
        assert await view(ctx) == before
        await ctx.sessions.append("s1", "one more fact: value cookie")
        after = await view(ctx)
    path.unlink()
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        assert await view(ctx) == after  # replayed from the journal alone
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        assert await view(ctx) == after  # through the snapshot the replay wrote


@pytest.mark.parametrize("name", ["snapshot", "summary"])
async def test_a_side_file_that_is_a_symlink_to_dev_zero_is_not_read(tmp_path: Path, name: str) -> None:
    """A side file made a symlink (to /dev/zero) is not followed: answers come from the journal and the file is replaced."""
    from ctxtrio.memory.sessions.summary import summary_path

    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        await fill(ctx)
        before = await view(ctx)
    journal = tmp_path / "data" / "sessions" / "s1.jsonl"
    path = {"snapshot": snapshot_path, "summary": summary_path}[name](journal)
    path.unlink(missing_ok=True)
    os.symlink("/dev/zero", path)
    async with ctxtrio.open_context(config(tmp_path)) as ctx:
        assert [info.live_entries for info in await ctx.sessions.list_sessions()] == [before[1].live_entries]
        assert await view(ctx) == before
        await ctx.sessions.compact("s1", keep_recent=1)
    assert not path.is_symlink() and path.stat().st_size < 1 << 20
