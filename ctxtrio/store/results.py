"""What journal writes take and return: append and rewrite results, and the rewrite callback.

Plain values shared by the appender (:mod:`.journal`), the store's handle and the
domains; :meth:`AppendResult.to_absorb` is how a domain takes in its own append.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .._errors import StoreError
from .records import Record, StoredRecord

__all__ = ["AppendResult", "JournalChangedError", "JournalExistsError", "Rewrite", "RewriteResult"]

#: Given every complete record of a journal (under its lock), the records it should hold
#: instead, or None to leave it as it is. Pure and quick: other appenders wait meanwhile.
Rewrite = Callable[[list[Record]], "list[Record] | None"]


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Records written by one append, and lines other processes had appended before them."""

    path: Path
    records: list[StoredRecord]
    start: int
    end: int
    foreign: list[StoredRecord]
    #: (device, inode) of the file written: a journal replaced by a prune is another file.
    file_id: tuple[int, int] | None = None
    #: The records of this process's appends written right before these in the same write (the
    #: commits of one group round's other documents): nothing of another lies between them.
    lead: tuple[StoredRecord, ...] = ()

    def to_absorb(self, applied_end: int) -> list[StoredRecord] | None:
        """What a state replayed from this journal up to ``applied_end`` applies to take in this append.

        The one way both domains absorb their own writes: ``[]`` when the state already
        read past it (a refresh got there first); the records, when the state ends
        exactly where the append began, or where one of ``lead`` begins (with the rest of
        ``lead`` before them: a round's commits are absorbed in whatever order their tasks
        run, and the first to run takes those before its own, where it re-read them); None
        when other lines may lie in between (any process's): then re-read the journal from
        ``applied_end`` instead.
        """
        if self.end <= applied_end:
            return []
        if self.start == applied_end:
            return self.records
        for number, record in enumerate(self.lead):
            if record.offset == applied_end:
                return [*self.lead[number:], *self.records]
        return None


class JournalChangedError(StoreError):
    """A conditional append found lines appended (by any process) past the expected end."""


class JournalExistsError(StoreError):
    """An install found the journal already holding records (see :mod:`.install`)."""


@dataclass(frozen=True, slots=True)
class RewriteResult:
    """A journal rewritten (``changed``) or left alone, with its records and bytes before and after."""

    changed: bool
    records_before: int
    records_after: int
    bytes_before: int
    bytes_after: int
