"""One group commit of the store writer, run in a worker thread (see :mod:`.writer`).

:func:`process_batch` writes and fsyncs every journal of a batch, one locked write per
journal, and returns the index work for the appends, which the writer runs after
acknowledging them (:func:`flush_index`). A removal or a move takes its file away here,
and leaves its index rows to that same work (:class:`~.index.Forget`, in order with the
appends), so it neither waits for the index nor costs a transaction of its own.
Catch-ups, rewrites and heals run in order, after flushing what precedes them, index
included. An index whose
write lock another process holds is deferred (``IndexHealth.lagging``); a damaged one is
healed here: reopened or recreated, and every document journal re-indexed.

All of it blocks; ``OSError`` and ``sqlite3.Error`` were already translated to
``StoreError`` below, and this module translates only its own file operations.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

from .._errors import CtxError, StoreError
from .index import Forget, IndexDamagedError, IndexFullError, SearchIndex
from .journal import UnstorableError
from .ops import ENDS_AT, AppendOp, CatchUpOp, HealOp, InstallOp, LaggingOp, MoveOp, ReindexOp, RemoveOp, RewriteOp
from .reading import store_error
from .results import AppendResult
from .rows import IndexRow, RowsFor

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .handle import IndexHealth, WriterStats
    from .journal import GroupItem, JournalAppender
    from .layout import DataDir
    from .ops import StoreOp
    from .records import NewRecord

__all__ = ["BUSY_BACKOFF_S", "IndexWork", "defer", "flush_index", "process_batch", "reindex_documents"]

log = logging.getLogger("ctxtrio.store")

#: After the index's write lock was found busy, batches defer their index updates for
#: this long instead of each waiting ``WRITE_BUSY_S`` for it again.
BUSY_BACKOFF_S = 1.0

#: What an acknowledged append leaves for the index: journal name, path, result, rows by
#: offset; or, for a journal removed or moved, the forgetting of its rows.
IndexWork = tuple[str, Path, AppendResult, dict[int, list[IndexRow]]] | Forget


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
    for op in batch:
        if isinstance(op, AppendOp) and op.expect_end is None:
            groups.setdefault(op.path, []).append(op)
        elif isinstance(op, AppendOp):  # a conditional append goes alone, after what precedes it
            group = groups.pop(op.path, [])
            _flush_appends(data, {op.path: group} if group else {}, appender, pending, stats, index.rows_for)
            _flush_appends(data, {op.path: [op]}, appender, pending, stats, index.rows_for)
        elif isinstance(op, RemoveOp | MoveOp):  # the file now; its rows with the next index flush
            _flush_appends(data, groups, appender, pending, stats, index.rows_for)
            groups = {}
            _remove(data, appender, op, pending)
        else:
            _flush_appends(data, groups, appender, pending, stats, index.rows_for)
            groups = {}
            flush_index(data, index, pending, health)
            pending = []
            _run_maintenance(data, index, appender, op, health)
    _flush_appends(data, groups, appender, pending, stats, index.rows_for)
    return pending


def _flush_appends(
    data: DataDir,
    groups: dict[Path, list[AppendOp]],
    appender: JournalAppender,
    pending: list[IndexWork],
    stats: WriterStats,
    rows_for: RowsFor,
) -> None:
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
                _flush_appends(data, {path: [op]}, appender, pending, stats, rows_for)
        elif isinstance(result, CtxError):
            for op in ops if number < len(items) else follow.failed(path):
                op.outcome.error = result
        else:
            stats.fsyncs += number < len(items)  # (a follow-up shares their round)
            _acknowledge(data, path, ops, result, pending, stats, rows_for)
    _flush_follow_ups(data, groups, follow.later, appender, pending, stats, rows_for)


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
) -> None:
    """Give each append of a journal written in a group its part of ``result``; queue its index rows."""
    stats.appends += len(ops)
    stats.records += len(result.records)
    rows: dict[int, list[IndexRow]] = {}
    for op, mine in zip(ops, _split(result, ops), strict=True):
        op.outcome.result = mine
        for number, stored in enumerate(mine.records):
            found = op.rows[number] if op.rows is not None else rows_for(stored.data)
            if found:
                rows[stored.offset] = found
    if rows:  # journals without searchable records (sessions) skip the index entirely
        pending.append((data.journal_name(path), path, result, rows))


def _split(result: AppendResult, ops: list[AppendOp]) -> list[AppendResult]:
    """The result of one append of a journal's group, per operation, in order."""
    results: list[AppendResult] = []
    position = 0
    for op in ops:
        mine = result.records[position : position + len(op.records)]
        position += len(op.records)
        start = mine[0].offset if mine else result.end
        end = mine[-1].end if mine else result.end
        results.append(AppendResult(result.path, mine, start, end, result.foreign, result.file_id))
    return results


def _name_end(op: AppendOp, end: int) -> None:
    """Write into ``op``'s follow-up records where ``op``'s records end (:data:`ENDS_AT`)."""
    assert op.then is not None
    op.then.records[:] = [replace(record, body={**record.body, ENDS_AT: end}) for record in op.then.records]


def _flush_follow_ups(
    data: DataDir,
    groups: dict[Path, list[AppendOp]],
    later: dict[Path, list[AppendOp]],
    appender: JournalAppender,
    pending: list[IndexWork],
    stats: WriterStats,
    rows_for: RowsFor,
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
        _flush_appends(data, follow, appender, pending, stats, rows_for)


def flush_index(data: DataDir, index: SearchIndex, pending: list[IndexWork], health: IndexHealth) -> None:
    """Index what batches appended and forget what they removed, and deferred journals too;
    defer again if the lock is busy."""
    if not pending:
        return
    if health.lagging and health.clock.now() < health.retry_at:
        # Still backing off from a busy lock: the journals are durable, fill the gap later.
        defer(pending, health)
        return
    try:
        index.index_batch(
            [
                work if isinstance(work, Forget) else (work[0], work[1], work[2].records, work[2].end, work[3])
                for work in pending
            ]
        )
        _catch_up_lagging(data, index, health)
    except IndexDamagedError as exc:
        log.warning("%s: healing it", exc)
        _heal(data, index, health, corrupt=exc.corrupt)
    except StoreError as exc:
        # The journals are durable; the watermark did not move, so a later batch or the
        # next search of these journals re-indexes the gap.
        defer(pending, health)
        if isinstance(exc, IndexFullError) and health.unforgotten:
            # Rows of removed journals hold room that deleting them needs: drop the derived index
            # now (as _forget_rows does) and rebuild it from the journals left, not at a retry.
            log.warning("search index update failed on a full disk (%s); rebuilding it from the journals", exc)
            _heal(data, index, health, corrupt=True)
            return
        if not isinstance(exc, IndexFullError):  # waiting helps a busy lock, not a full disk
            health.retry_at = health.clock.now() + BUSY_BACKOFF_S
        log.warning("index update deferred for %d journal(s): %s", len(health.lagging), exc)


def defer(pending: list[IndexWork], health: IndexHealth) -> None:
    """Leave index work for later: appends are caught up from their journals, removals forgotten."""
    for work in pending:
        if isinstance(work, Forget):
            health.lagging.pop(work.journal, None)
            health.unforgotten.add(work.journal)
        else:
            health.lagging[work[0]] = work[1]


def _catch_up_lagging(data: DataDir, index: SearchIndex, health: IndexHealth) -> None:
    """Forget the rows of removed journals left over, and fill the index gaps of deferred
    journals (raises StoreError if the lock is still busy)."""
    for name in list(health.unforgotten):
        _forget_rows(data, index, health, name)
        health.unforgotten.discard(name)
    for name, path in list(health.lagging.items()):
        index.catch_up(name, path, _size(path))
        health.lagging.pop(name, None)


def _heal(data: DataDir, index: SearchIndex, health: IndexHealth, *, corrupt: bool) -> None:
    """Reopen (or recreate, if ``corrupt``) the index and re-index every document journal."""
    index.heal(corrupt=corrupt)
    health.heals += 1
    reindex_documents(data, index)
    health.lagging.clear()
    health.unforgotten.clear()  # only the journals still there were indexed again


def reindex_documents(data: DataDir, index: SearchIndex) -> None:
    """Index every document journal up to its end (only the gaps: watermarks are kept)."""
    try:
        folders = [Path(entry.path) for entry in os.scandir(data.docs) if entry.is_dir(follow_symlinks=False)]
    except OSError as exc:
        raise store_error("list", data.docs, exc) from exc
    added = 0
    for folder in sorted(folders):
        for path in sorted(folder.glob("*.jsonl")):
            added += index.catch_up(data.journal_name(path), path, _size(path))
    if added:  # nothing to say on a store whose index was up to date (or empty)
        log.info("search index: %d rows re-indexed from the document journals", added)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise store_error("stat", path, exc) from exc


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
                op.outcome.result = appender.install(op.path, op.records)
            case CatchUpOp() | RewriteOp() | ReindexOp():
                if isinstance(op, RewriteOp):
                    op.outcome.rewritten = rewritten = appender.rewrite(op.path, op.transform)
                    if rewritten.changed:
                        index.forget(name)
                elif isinstance(op, ReindexOp):
                    index.forget(name)
                op.outcome.added = index.catch_up(name, op.path, _size(op.path))
            case LaggingOp():
                _retry_lagging(data, index, health)
            case HealOp():
                _heal(data, index, health, corrupt=op.corrupt)
            case _:
                assert_never(op)
    except IndexDamagedError as exc:
        try:
            _heal(data, index, health, corrupt=exc.corrupt)
        except CtxError as again:
            op.outcome.error = again
    except CtxError as exc:
        op.outcome.error = exc


def _forget_rows(data: DataDir, index: SearchIndex, health: IndexHealth, name: str) -> None:
    """Drop a removed journal's rows from the index (and its lag); rebuild the index if it cannot."""
    health.lagging.pop(name, None)
    try:
        index.forget(name)
    except IndexDamagedError:
        raise
    except StoreError as exc:
        # Deleting rows needs free space (SQLite writes the deletion first): on a
        # full disk the rows of a removed journal would stay, and hold the space.
        # The index is derived: drop it and rebuild it from the journals left.
        log.warning("search index could not forget %s (%s); rebuilding it from the journals", name, exc)
        _heal(data, index, health, corrupt=True)


def _retry_lagging(data: DataDir, index: SearchIndex, health: IndexHealth) -> None:
    """Catch the lagging journals up; still busy, try again after :data:`BUSY_BACKOFF_S`."""
    try:
        _catch_up_lagging(data, index, health)
    except IndexDamagedError:
        raise
    except StoreError as exc:  # still busy: the search that asked reports it
        health.retry_at = health.clock.now() + BUSY_BACKOFF_S
        log.warning("deferred index updates still blocked: %s", exc)


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
