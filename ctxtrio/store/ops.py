"""The operations the store writer runs: one small frozen class each, :data:`StoreOp` their union.

A producer (:class:`~ctxtrio.store.handle.StoreHandle`) queues one on the writer's
channel and waits for its :class:`Outcome`'s ``done``; the writer
(:func:`~ctxtrio.store.writer.run_store_writer`) sets the outcome first, then ``done``.
The operations are matched exhaustively (``assert_never``), so a new one cannot be
forgotten by a ``match``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import trio

from .._errors import CtxError
from .records import NewRecord
from .results import AppendResult, Rewrite, RewriteResult
from .rows import IndexRow

__all__ = [
    "ENDS_AT",
    "AppendOp",
    "CatchUpOp",
    "HealOp",
    "InstallOp",
    "LaggingOp",
    "Maintenance",
    "MoveOp",
    "Outcome",
    "ReindexOp",
    "RemoveOp",
    "RewriteOp",
    "StoreOp",
]


#: The member the writer sets in each record of a follow-up (``AppendOp.then``): where the
#: records it follows end in their journal. The follow-up is written in the same fsync round,
#: so after a crash a reader must check that its journal reaches that far.
ENDS_AT = "end"


@dataclass(slots=True)
class Outcome:
    """What became of one operation (set by the writer before ``done``)."""

    done: trio.Event = field(default_factory=trio.Event)
    error: CtxError | None = None
    #: Of an append or an install.
    result: AppendResult | None = None
    #: Index rows added by a catch-up, rewrite or reindex.
    added: int = 0
    #: Of a rewrite.
    rewritten: RewriteResult | None = None

    @property
    def settled(self) -> bool:
        """Whether the writer gave this operation a result or an error."""
        return self.result is not None or self.error is not None or self.rewritten is not None


@dataclass(frozen=True, slots=True, eq=False)
class AppendOp:
    """Append ``records`` (with precomputed index ``rows``, one list per record, when given).

    With ``expect_end``: only if the journal's complete lines end exactly there.
    """

    kind: ClassVar[str] = "append"
    path: Path
    records: list[NewRecord]
    rows: list[list[IndexRow]] | None = None
    expect_end: int | None = None
    outcome: Outcome = field(default_factory=Outcome)
    #: Without ``expect_end``: another append (a document's commit), to another journal,
    #: written after this one and fsynced with it, each of its records naming where this one
    #: ends (:data:`ENDS_AT`); not written if this one fails to be written.
    then: AppendOp | None = None


@dataclass(frozen=True, slots=True, eq=False)
class InstallOp:
    """Write ``records`` as the whole new journal ``path``: all durably, or none."""

    kind: ClassVar[str] = "install"
    path: Path
    records: list[NewRecord]
    outcome: Outcome = field(default_factory=Outcome)


@dataclass(frozen=True, slots=True, eq=False)
class RemoveOp:
    """Delete a journal file and its index rows."""

    kind: ClassVar[str] = "remove"
    path: Path
    outcome: Outcome = field(default_factory=Outcome)


@dataclass(frozen=True, slots=True, eq=False)
class MoveOp:
    """Move a journal file to ``target`` and drop its index rows."""

    kind: ClassVar[str] = "move"
    path: Path
    target: Path
    outcome: Outcome = field(default_factory=Outcome)


@dataclass(frozen=True, slots=True, eq=False)
class CatchUpOp:
    """Index what ``path`` holds beyond the index watermark."""

    kind: ClassVar[str] = "catch_up"
    path: Path
    outcome: Outcome = field(default_factory=Outcome)


@dataclass(frozen=True, slots=True, eq=False)
class RewriteOp:
    """Replace a journal with what ``transform`` makes of its records; index it again."""

    kind: ClassVar[str] = "rewrite"
    path: Path
    transform: Rewrite
    outcome: Outcome = field(default_factory=Outcome)


@dataclass(frozen=True, slots=True, eq=False)
class ReindexOp:
    """Drop a journal's index rows and index it again from the file."""

    kind: ClassVar[str] = "reindex"
    path: Path
    outcome: Outcome = field(default_factory=Outcome)


@dataclass(frozen=True, slots=True, eq=False)
class LaggingOp:
    """Fill the deferred index updates (``path`` is the index file)."""

    kind: ClassVar[str] = "lagging"
    path: Path
    outcome: Outcome = field(default_factory=Outcome)


@dataclass(frozen=True, slots=True, eq=False)
class HealOp:
    """Reopen (or, if ``corrupt``, recreate) the index and re-index every document journal."""

    kind: ClassVar[str] = "heal"
    path: Path
    corrupt: bool
    outcome: Outcome = field(default_factory=Outcome)


#: Everything but an append: run one at a time, after flushing what precedes it.
Maintenance = InstallOp | RemoveOp | MoveOp | CatchUpOp | RewriteOp | ReindexOp | LaggingOp | HealOp
#: One queued operation for the writer.
StoreOp = AppendOp | Maintenance
