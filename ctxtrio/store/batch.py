"""One group commit of the store writer, run in a worker thread (see :mod:`.writer`).

:func:`process_batch` writes and fsyncs every journal of a batch, one locked write per
journal, and returns the index work for the appends, which the writer runs after
acknowledging them (:func:`~.index_flush.flush_index`). A removal or a move takes its file
away here, and leaves its index rows to that same work (:class:`~.index.Forget`, in order
with the appends), so it neither waits for the index nor costs a transaction of its own.
Catch-ups, rewrites and heals run in order, after flushing what precedes them, index
included. An append that finds no room on the disk takes the room of the derived index
first and is written once more (:func:`~.room.give_way`).

All of it blocks; ``OSError`` and ``sqlite3.Error`` were already translated to
``StoreError`` below, and this module translates only its own file operations.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, TypeVar, assert_never

from .._errors import CtxError, StoreError
from .index import Forget, IndexDamagedError, SearchIndex
from .index_flush import IndexWork, flush_index, heal_index, retry_lagging
from .journal import UnstorableError
from .ops import ENDS_AT, AppendOp, CatchUpOp, HealOp, InstallOp, LaggingOp, MoveOp, ReindexOp, RemoveOp, RewriteOp
from .reading import DiskFullError, journal_size, store_error
from .results import AppendResult
from .room import give_way

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from .journal import GroupItem, JournalAppender
    from .layout import DataDir
    from .ops import StoreOp
    from .records import NewRecord
    from .rows import IndexRow, RowsFor
    from .writer_state import IndexHealth, WriterStats

__all__ = ["process_batch"]

_T = TypeVar("_T")

log = logging.getLogger("ctxtrio.store")


def process_batch(
    data: DataDir,
    index: SearchIndex,
    appender: JournalAppender,
    batch: list[StoreOp],
    stats: WriterStats,
    health: IndexHealth,
) -> list[IndexWork]:
    """One group commit, in a worker thread: every journal written and fsynced.

    Returns the index work for the appends and removals, which the writer runs after
    acknowledging them. Other maintenance in the batch runs in order, after flushing
    what precedes it (index included). An append's follow-up (``AppendOp.then``: a
    document's commit) is written after it and fsynced in the same round, naming where it
    ends (``ENDS_AT``); in the next round if its journal is also appended to in this one.
    """
    stats.batches += 1
    pending: list[IndexWork] = []
    groups: dict[Path, list[AppendOp]] = {}
    flush = partial(_flush_appends, data, appender=appender, stats=stats, rows_for=index.rows_for)
    room = partial(give_way, index, health)
    for op in batch:
        if isinstance(op, AppendOp) and op.expect_end is None:
            groups.setdefault(op.path, []).append(op)
        elif isinstance(op, AppendOp):  # a conditional append goes alone, after what precedes it
            group = groups.pop(op.path, [])
            flush({op.path: group} if group else {}, pending, give_way=room)
            flush({op.path: [op]}, pending, give_way=room)
        elif isinstance(op, RemoveOp | MoveOp):  # the file now; its rows with the next index flush
            flush(groups, pending, give_way=room)
            groups = {}
            _remove(data, appender, op, pending)
        else:
            flush(groups, pending, give_way=room)
            groups = {}
            flush_index(data, index, pending, health)
            pending = []
            _run_maintenance(data, index, appender, op, health)
    flush(groups, pending, give_way=room)
    return pending


def _flush_appends(
    data: DataDir,
    groups: dict[Path, list[AppendOp]],
    pending: list[IndexWork],
    *,
    appender: JournalAppender,
    stats: WriterStats,
    rows_for: RowsFor,
    give_way: Callable[[], None] | None,
) -> None:
    """Write ``groups`` as one group commit; ``give_way`` (None: not again) frees room for a
    journal that found none, which is then written once more."""
    again = partial(_flush_appends, data, appender=appender, stats=stats, rows_for=rows_for)
    items: list[GroupItem] = [
        (path, [record for op in ops for record in op.records], ops[0].expect_end if len(ops) == 1 else None)
        for path, ops in groups.items()
    ]
    follow = _FollowUps(groups)
    outcomes = appender.append_group(items, [(path, partial(follow.build, path)) for path in follow.leaders])
    written = [*groups.items(), *follow.written.items()]
    for number, ((path, ops), result) in enumerate(zip(written, outcomes, strict=True)):
        if isinstance(result, UnstorableError) and len(ops) > 1:
            # Nothing of the group was written: write each append alone, so only the bad one fails.
            for op in ops:
                again({path: [op]}, pending, give_way=give_way)
        elif isinstance(result, DiskFullError) and give_way is not None and ops:
            # Nothing of it was written (cut back): the derived index gives the journals its room
            # first. (A follow-up's ops are those built, their ends named: written as plain appends.)
            give_way()
            again({path: ops}, pending, give_way=None)
        elif isinstance(result, CtxError):
            for op in ops if number < len(items) else follow.failed(path):
                op.outcome.error = result
        else:
            stats.fsyncs += number < len(items)  # (a follow-up shares their round)
            _acknowledge(data, path, ops, result, pending, stats, rows_for, led=number >= len(items))
    _flush_follow_ups(groups, follow.later, partial(again, pending=pending, give_way=give_way))


class _FollowUps:
    """The follow-ups (``AppendOp.then``: a document's commit) of one group's appends.

    Written in the same fsync round, after what they follow and naming where it ends
    (:data:`ENDS_AT`); one whose journal is also appended to in the group waits for the
    next round (``later``).
    """

    def __init__(self, groups: dict[Path, list[AppendOp]]) -> None:
        self._groups = groups
        self._numbers = {path: number for number, path in enumerate(groups)}
        #: Follow-up journal → the appends whose follow-ups go there.
        self.leaders: dict[Path, list[AppendOp]] = {}
        self.later: dict[Path, list[AppendOp]] = {}
        for ops in groups.values():
            for op in ops:
                if op.then is not None and not op.then.outcome.settled:
                    (self.later if op.then.path in groups else self.leaders).setdefault(op.then.path, []).append(op)
        #: Follow-up journal → the follow-ups written there (those of appends that were written).
        self.written: dict[Path, list[AppendOp]] = {path: [] for path in self.leaders}
        self._built: set[Path] = set()

    def build(self, path: Path, results: Sequence[AppendResult | StoreError | None]) -> list[NewRecord]:
        """The records of ``path``'s follow-ups whose appends were written, each naming its end."""
        self._built.add(path)
        for op in self.leaders[path]:
            result = results[self._numbers[op.path]]
            if isinstance(result, AppendResult) and op.then is not None:
                ops = self._groups[op.path]
                _name_end(op, _split(result, ops)[ops.index(op)].end)
                self.written[path].append(op.then)
        return [record for then in self.written[path] for record in then.records]

    def failed(self, path: Path) -> list[AppendOp]:
        """The follow-ups an error of ``path``'s append concerns (all of them if it was never built)."""
        if path in self._built:
            return self.written[path]
        return [op.then for op in self.leaders[path] if op.then is not None]


def _acknowledge(
    data: DataDir,
    path: Path,
    ops: list[AppendOp],
    result: AppendResult,
    pending: list[IndexWork],
    stats: WriterStats,
    rows_for: RowsFor,
    *,
    led: bool = False,
) -> None:
    """Give each append of a journal written in a group its part of ``result``; queue its index rows.

    ``led`` (follow-ups: documents' commits): each part also names the parts before it (``lead``).
    """
    stats.appends += len(ops)
    stats.records += len(result.records)
    rows: dict[int, list[IndexRow]] = {}
    for op, mine in zip(ops, _split(result, ops, led=led), strict=True):
        op.outcome.result = mine
        for number, stored in enumerate(mine.records):
            found = op.rows[number] if op.rows is not None else rows_for(stored.data)
            if found:
                rows[stored.offset] = found
    if rows:  # journals without searchable records (sessions) skip the index entirely
        pending.append((data.journal_name(path), path, result, rows))


def _split(result: AppendResult, ops: list[AppendOp], *, led: bool = False) -> list[AppendResult]:
    """The result of one append of a journal's group, per operation, in order; ``led``: each names
    the records of those before it (:attr:`~.results.AppendResult.lead`)."""
    results: list[AppendResult] = []
    position = 0
    for op in ops:
        lead = tuple(result.records[:position]) if led else ()
        mine = result.records[position : position + len(op.records)]
        position += len(op.records)
        start = mine[0].offset if mine else result.end
        end = mine[-1].end if mine else result.end
        results.append(AppendResult(result.path, mine, start, end, result.foreign, result.file_id, lead))
    return results


def _name_end(op: AppendOp, end: int) -> None:
    """Write into ``op``'s follow-up records where ``op``'s records end (:data:`ENDS_AT`)."""
    assert op.then is not None
    op.then.records[:] = [replace(record, body={**record.body, ENDS_AT: end}) for record in op.then.records]


def _flush_follow_ups(
    groups: dict[Path, list[AppendOp]],
    later: dict[Path, list[AppendOp]],
    flush: Callable[[dict[Path, list[AppendOp]]], None],
) -> None:
    """Settle the follow-ups of failed appends; write those ``later`` holds, of appends now durable."""
    follow: dict[Path, list[AppendOp]] = {}
    for ops in groups.values():
        for op in ops:
            if op.then is not None and not op.then.outcome.settled:
                if op.outcome.result is None:
                    op.then.outcome.error = StoreError(f"not written: the append to {op.path.name} before it failed")
                elif op in later.get(op.then.path, ()):
                    _name_end(op, op.outcome.result.end)
                    follow.setdefault(op.then.path, []).append(op.then)
    if follow:  # written only now that what they follow is durable
        flush(follow)


def _run_maintenance(
    data: DataDir,
    index: SearchIndex,
    appender: JournalAppender,
    op: InstallOp | CatchUpOp | RewriteOp | ReindexOp | LaggingOp | HealOp,
    health: IndexHealth,
) -> None:
    name = data.journal_name(op.path)
    try:
        match op:
            case InstallOp():
                op.outcome.result = _with_room(partial(appender.install, op.path, op.records), index, health)
            case CatchUpOp() | RewriteOp() | ReindexOp():
                changed = isinstance(op, ReindexOp)
                if isinstance(op, RewriteOp):
                    op.outcome.rewritten = _with_room(partial(appender.rewrite, op.path, op.transform), index, health)
                    changed = op.outcome.rewritten.changed
                if not health.shelved:  # (a shelved index is rebuilt from every journal as it is then)
                    if changed:
                        index.forget(name)
                    op.outcome.added = index.catch_up(name, op.path, journal_size(op.path))
            case LaggingOp():
                retry_lagging(data, index, health)
            case HealOp():
                heal_index(data, index, health, corrupt=op.corrupt)
            case _:
                assert_never(op)
    except IndexDamagedError as exc:
        try:
            heal_index(data, index, health, corrupt=exc.corrupt)
        except CtxError as again:
            op.outcome.error = again
    except CtxError as exc:
        op.outcome.error = exc


def _with_room(write: Callable[[], _T], index: SearchIndex, health: IndexHealth) -> _T:
    """``write`` a whole journal (an import, a rewrite); one that finds no room on the disk (it
    wrote nothing: its temporary file is gone) takes the room of the derived index, as an append
    does, and is written once more."""
    try:
        return write()
    except DiskFullError:
        give_way(index, health)
        return write()


def _remove(data: DataDir, appender: JournalAppender, op: RemoveOp | MoveOp, pending: list[IndexWork]) -> None:
    """Remove or move a journal's file now; its rows go with the index work that follows."""
    try:
        _remove_file(op)
    except CtxError as exc:
        op.outcome.error = exc
        return
    appender.forget(op.path)
    pending.append(Forget(data.journal_name(op.path)))


def _remove_file(op: RemoveOp | MoveOp) -> None:
    target = op.target if isinstance(op, MoveOp) else None
    try:
        if target is None:
            op.path.unlink(missing_ok=True)
        else:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.replace(op.path, target)
    except FileNotFoundError:
        pass
    except OSError as exc:
        action = "remove" if target is None else f"move to {target}"
        raise store_error(action, op.path, exc) from exc
