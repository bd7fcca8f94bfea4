"""doctor's index line beside a server: a batch the server acknowledged but has not indexed yet is not BAD."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import trio
import trio.testing

from ctxtrio.cli import doctor
from ctxtrio.docs.model import IndexCheck

if TYPE_CHECKING:
    from ctxtrio._wiring import Wiring

BEHIND = IndexCheck(1, 0, 0, ("docs/d/g.jsonl",), ())
IN_STEP = IndexCheck(1, 1, 1, (), ())


@dataclass
class _Documents:
    """check_index answering ``checks`` in turn (the last one from then on), noting when it was asked."""

    checks: list[IndexCheck]
    asked_at: list[float] = field(default_factory=list)

    async def check_index(self) -> IndexCheck:
        self.asked_at.append(trio.current_time())
        return self.checks.pop(0) if len(self.checks) > 1 else self.checks[0]


@dataclass
class _Wiring:
    documents: _Documents


async def _line(documents: _Documents) -> tuple[bool, str]:
    report = doctor.Report()
    await doctor._index(cast("Wiring", _Wiring(documents)), report, repair=False)
    [(_, ok, line)] = report.lines
    return ok, line


async def test_a_document_indexed_a_moment_later_is_in_step(autojump_clock: trio.testing.MockClock) -> None:
    """Behind at the first look, in step at the next (the server's writer indexed its batch): ok, asked
    again after the first pause."""
    documents = _Documents([BEHIND, BEHIND, IN_STEP])
    ok, line = await _line(documents)
    assert ok and line == "in step: 1 row for 1 document"
    assert documents.asked_at == [0.0, 0.25, 0.75]


async def test_a_gap_no_server_fills_is_bad_after_the_pauses(autojump_clock: trio.testing.MockClock) -> None:
    """Behind at every look (no server catches the journal up): BAD naming --repair, after every pause."""
    documents = _Documents([BEHIND])
    ok, line = await _line(documents)
    assert not ok and line.startswith("1 document not fully indexed") and "doctor --repair" in line
    assert documents.asked_at == [0.0, 0.25, 0.75, 1.75, 3.75]
