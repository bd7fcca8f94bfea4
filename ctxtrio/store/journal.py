"""Append-only JSONL journal files: appending under an OS lock, several journals as one group commit.

Reading is :mod:`.reading`; one journal's write under the lock (catch up on other
processes' lines, number and write the records) is :mod:`.journal_write`; the file
operations under an append are :mod:`.journal_files`; installing a whole journal is :mod:`.install`.

Everything here is blocking file I/O and runs in worker threads (``trio.to_thread``),
called by the store writer (appends) and by the services (reads). ``OSError`` is
translated to ``StoreError`` here, once.

Durability and sharing rules:

* Every append takes an exclusive ``fcntl.flock`` on the journal, looks at the file's
  real size, reads any lines another process appended since it last looked (to learn the
  last sequence number), assigns sequence numbers, writes all its lines with one
  ``write`` and one ``fsync`` (a group commit fsyncs its journals at once), then unlocks. Two processes therefore never interleave
  lines or reuse a sequence number.
* A crash can tear only the final line. A reader skips an incomplete final line and
  counts it; the next appender terminates it with a newline first, so the fragment
  becomes one malformed line instead of corrupting the next record.
* A malformed complete line (bad JSON, not UTF-8, missing envelope) is copied to the
  quarantine folder once and skipped; the journal itself is never rewritten.
* A conditional append (``expect_end``) checks, under the lock, that no complete line
  was added past ``expect_end``; otherwise it writes nothing and raises
  :class:`JournalChangedError`. A decision taken on the journal as read up to there
  (what a compaction may fold) therefore holds across processes.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .._clock import SYSTEM_CLOCK, ThreadClock
from .._errors import StoreError
from .install import install_journal
from .journal_files import check_end, lock_polling, replaced
from .journal_files import fsync_dir as _fsync_dir
from .journal_write import Tail, Written, write_records
from .reading import parse_lines, store_error
from .records import NewRecord, encode_line
from .results import AppendResult, Rewrite, RewriteResult

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

__all__ = ["FollowItem", "GroupItem", "JournalAppender", "UnstorableError"]


log = logging.getLogger("ctxtrio.store")


class UnstorableError(StoreError):
    """Records that could not be encoded or written for a reason no check foresaw; nothing was written."""


#: (journal, records, expect_end) of one append in a group.
GroupItem = tuple[Path, list[NewRecord], "int | None"]
#: (journal, build) of a follow-up in a group: ``build`` gets the items' results once they
#: are written (None or the error for those that were not) and returns the records to append.
FollowItem = tuple[Path, "Callable[[Sequence[AppendResult | StoreError | None]], list[NewRecord]]"]
#: fsyncs of one group run at once in up to this many threads.
_SYNC_THREADS = 8


class JournalAppender:
    """Appends to journals under an exclusive file lock. Not thread-safe: one writer thread at a time.

    Keeps, per journal, the size and last sequence number it last saw, so an append
    only reads what other processes added since.
    """

    #: Journals kept open between batches (least recently used closed first).
    MAX_OPEN = 128

    def __init__(
        self,
        *,
        lock_timeout_s: float,
        quarantine_dir: Path | None = None,
        clock: ThreadClock = SYSTEM_CLOCK,
        folders_in: Collection[Path] = (),
    ) -> None:
        """``folders_in``: folders in which a journal's missing folder is made on its first
        append (``docs/``: a new document's ``docs/<doc>/``); elsewhere a missing folder fails."""
        self._lock_timeout_s = lock_timeout_s
        self._clock = clock
        self._folders_in = frozenset(folders_in)
        self._quarantine_dir = quarantine_dir
        #: Set at shutdown once the drain deadline passed: lock waits give up at once.
        self.giving_up = threading.Event()
        self._tails: dict[Path, Tail] = {}
        self._fds: dict[Path, int] = {}
        #: Threads that fsync a group's journals at once (started on the first group of several).
        self._syncer: ThreadPoolExecutor | None = None
        #: Folders made by :meth:`_open` whose own entry the next group fsyncs (their parent).
        self._new_folders: set[Path] = set()

    def forget(self, path: Path) -> None:
        """Drop what is known about ``path`` (after the file was removed)."""
        self._tails.pop(path, None)
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        """Close every journal kept open, and stop the fsync threads."""
        for path in list(self._fds):
            self.forget(path)
        if self._syncer is not None:
            self._syncer.shutdown()
            self._syncer = None

    def append(self, path: Path, new: list[NewRecord], *, expect_end: int | None = None) -> AppendResult:
        """Append ``new`` to ``path`` durably (write + fsync) and return the stored records.

        With ``expect_end``, only if the file's complete lines end there (checked under the
        lock); else :class:`JournalChangedError` and nothing is written.
        """
        (outcome,) = self.append_group([(path, new, expect_end)])
        if isinstance(outcome, StoreError):
            raise outcome
        return outcome

    def append_group(
        self, items: Sequence[GroupItem], follow: Sequence[FollowItem] = ()
    ) -> list[AppendResult | StoreError]:
        """Append to several journals (one item each) as one group commit; an outcome per item,
        then one per follow-up.

        Each journal is locked in path order (two processes never wait for each other in a
        cycle) and written; then all are fsynced at once, in parallel threads, which the file
        system joins into few journal commits (ext4 here: 50 files of 100 KB in ~20 ms instead
        of ~200 ms one after another); then they are unlocked. A journal whose write or fsync
        fails is cut back to where its append began and gets its error; the others are not
        affected.

        ``follow``: appends whose records are built from the items' outcomes once those are
        written (a document's commit naming where its generation ends). They are locked with
        the items, written after every item (so a process that reads one finds what it
        follows already in its file) and fsynced in the same round: a reader must check that
        what a follow-up names is there (a crash may keep one and not the other). Their
        journals differ from the items'.
        """
        count = len(items)
        paths = [item[0] for item in items] + [path for path, _ in follow]
        outcomes: list[AppendResult | StoreError | None] = [None] * len(paths)
        results: list[AppendResult | StoreError | None] = [None] * count  # as written, for the follow-ups
        held: dict[int, tuple[int, bool]] = {}
        written: list[tuple[int, Written]] = []
        try:
            for number in sorted(range(len(paths)), key=lambda n: str(paths[n])):
                try:
                    held[number] = self._acquire(paths[number], items[number][2] if number < count else None)
                except StoreError as exc:
                    outcomes[number] = exc
            for number in range(len(paths)):  # the items, then the follow-ups built from them
                done = None
                if number in held:
                    new = items[number][1] if number < count else follow[number - count][1](results)
                    if number >= count and not new:  # (none of what it follows was written)
                        outcomes[number] = StoreError(f"nothing to append to {paths[number].name}")
                    else:
                        done = self._write_held(paths[number], held[number], new, outcomes, number)
                    if done is not None:
                        written.append((number, done))
                if number < count:
                    results[number] = done.result if done is not None else outcomes[number]
            self._sync_written(written, outcomes)
        finally:
            for number, (fd, _) in held.items():
                if self._fds.get(paths[number]) == fd:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                if not isinstance(outcomes[number], AppendResult):
                    self.forget(paths[number])
        return [outcome if outcome is not None else StoreError("append not attempted") for outcome in outcomes]

    def _write_held(
        self,
        path: Path,
        held: tuple[int, bool],
        new: list[NewRecord],
        outcomes: list[AppendResult | StoreError | None],
        number: int,
    ) -> Written | None:
        """Write ``new`` to the locked journal; None, and its error in ``outcomes``, if it was not."""
        try:
            return write_records(*held, path, new, tail=self._tails.get(path), quarantine_dir=self._quarantine_dir)
        except StoreError as exc:
            outcomes[number] = exc
        except Exception as exc:  # (a record no check foresaw fails alone: nothing was written)
            log.exception("append to %s failed before writing", path)
            outcomes[number] = UnstorableError(
                f"cannot store these records in {path.name}: {type(exc).__name__}: {exc}"
            )
        return None

    def _sync_written(
        self, written: list[tuple[int, Written]], outcomes: list[AppendResult | StoreError | None]
    ) -> None:
        """fsync what was written, at once; a journal whose fsync fails is cut back and gets the error."""
        failures = self._sync([done for _, done in written])
        for number, done in written:
            error = failures.get(done.fd)
            if error is None:
                self._tails[done.path] = done.tail
                outcomes[number] = done.result
                continue
            try:
                os.ftruncate(done.fd, done.size)  # leave no partial line behind
            except OSError:
                pass
            outcomes[number] = store_error("append to journal", done.path, error)

    def _acquire(self, path: Path, expect_end: int | None) -> tuple[int, bool]:
        """Open and lock ``path`` (again if another process replaced it), check ``expect_end``;
        the descriptor and whether it was created. The lock stays taken."""
        fd, created = self._open(path)
        try:
            self._lock(fd, path)
            try:
                if not created and replaced(fd, path):
                    # Another process removed or replaced the file since we opened it:
                    # writing to the old inode would lose the records. Start over.
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    self.forget(path)
                    return self._acquire(path, expect_end)
                if expect_end is not None:
                    check_end(fd, path, expect_end)
                return fd, created
            except BaseException:
                if self._fds.get(path) == fd:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                raise
        except BaseException:
            self.forget(path)
            raise

    def _sync(self, written: list[Written]) -> dict[int, OSError]:
        """fsync every written journal, the folder of each new one and the parent of each new
        folder; the errors by descriptor."""
        failures: dict[int, OSError] = {}

        def sync(fd: int) -> None:
            try:
                os.fsync(fd)
            except OSError as exc:
                failures[fd] = exc

        jobs: list[Callable[[], None]] = [partial(sync, done.fd) for done in written]
        folders = {done.path.parent for done in written if done.created}
        folders |= {folder.parent for folder in self._new_folders}
        self._new_folders.clear()
        jobs += [partial(_fsync_dir, folder) for folder in folders]
        if len(jobs) > 1 and self._syncer is None:
            self._syncer = ThreadPoolExecutor(_SYNC_THREADS, thread_name_prefix="ctxtrio-fsync")
        futures = [self._syncer.submit(job) for job in jobs[1:]] if self._syncer is not None else []
        if jobs:
            jobs[0]()  # this thread takes one itself: one hand-off fewer a round
        for future in futures:
            future.result()
        return failures

    def install(self, path: Path, new: list[NewRecord]) -> AppendResult:
        """Write ``new`` as the whole new journal ``path``, all or nothing (see :mod:`.install`)."""
        self.forget(path)
        return install_journal(path, new, self._lock)

    def rewrite(self, path: Path, transform: Rewrite) -> RewriteResult:
        """Replace ``path`` with the records ``transform`` returns, under the journal's lock.

        The only operation that does not append: ``prune`` uses it to drop what it
        removes for good. The new file is written beside the old one, fsynced and
        renamed over it, so a crash leaves one or the other whole. Other processes
        notice the new inode (appenders retry on it; readers reload), and sequence
        numbers stay unique because ``transform`` keeps records' envelopes as they are.
        A missing journal is left missing; an empty result removes the file.
        """
        if not path.exists():
            return RewriteResult(False, 0, 0, 0, 0)
        fd, _ = self._open(path)
        try:
            self._lock(fd, path)
            if replaced(fd, path):
                fcntl.flock(fd, fcntl.LOCK_UN)
                self.forget(path)
                return self.rewrite(path, transform)
            size = os.fstat(fd).st_size
            found = parse_lines(os.pread(fd, size, 0), 0, path=path, quarantine_dir=self._quarantine_dir)
            before = [record.data for record in found.records]
            after = transform(before)
            if after is None:
                return RewriteResult(False, len(before), len(before), size, size)
            if not after:
                path.unlink()
                _fsync_dir(path.parent)
                return RewriteResult(True, len(before), 0, size, 0)
            payload = b"".join(encode_line(data) for data in after)
            temporary = path.with_name(f".{path.name}.rewrite-{os.getpid()}")
            try:
                with open(temporary, "wb") as handle:
                    handle.write(payload)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(temporary, path)
            except OSError:
                # The journal stays as it was; a temporary cut short by a full disk must not keep its room.
                with contextlib.suppress(OSError):
                    temporary.unlink()
                raise
            _fsync_dir(path.parent)
            return RewriteResult(True, len(before), len(after), size, len(payload))
        except OSError as exc:
            raise store_error("rewrite journal", path, exc) from exc
        finally:
            self.forget(path)  # closing the old descriptor releases its lock

    def _open(self, path: Path) -> tuple[int, bool]:
        """The kept-open descriptor of ``path`` (opened, or created, on first use)."""
        fd = self._fds.pop(path, None)
        created = False
        if fd is None:
            created = not path.exists()
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            try:
                try:
                    fd = os.open(path, flags, 0o600)
                except FileNotFoundError:
                    if path.parent.parent not in self._folders_in:
                        raise
                    # A new document's folder: made here, so an ingest needs no call of
                    # its own for it; its entry is fsynced with the group (see _sync).
                    path.parent.mkdir(mode=0o700, exist_ok=True)
                    self._new_folders.add(path.parent)
                    fd = os.open(path, flags, 0o600)
            except OSError as exc:
                raise store_error("open journal", path, exc) from exc
            while len(self._fds) >= self.MAX_OPEN:
                oldest = next(iter(self._fds))
                os.close(self._fds.pop(oldest))
        self._fds[path] = fd  # most recently used last
        return fd, created

    def _lock(self, fd: int, path: Path) -> None:
        lock_polling(fd, path, timeout_s=self._lock_timeout_s, clock=self._clock, giving_up=self.giving_up)
