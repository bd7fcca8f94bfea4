"""Prune reads a record's time as replay does (state/base.record_time): a time that is not one counts as 0."""

from __future__ import annotations

import math

from ctxtrio.memory.admin.prune import plan_session, prune_records
from ctxtrio.store.records import JSON, SCHEMA_VERSION, Record

NOW = 1_780_000_000.0
CUTOFF = NOW - 86_400

#: Times a journal can hold that are not times: json.loads reads NaN and Infinity (it accepts them by default,
#: Python's json docs, "parse_constant"), and sessions imported before imports were checked kept anything.
NOT_TIMES: list[JSON] = [math.nan, math.inf, -math.inf, -5.0, 1e300, True, "2026-01-01", None]


def _journal(deleted_at: JSON) -> list[Record]:
    """Two notes written a week before NOW; a patch stamped ``deleted_at`` deletes the first."""
    made = NOW - 7 * 86_400
    return [
        {"v": SCHEMA_VERSION, "seq": 1, "ts": made, "kind": "session", "id": "s", "title": "s"},
        {"v": SCHEMA_VERSION, "seq": 2, "ts": made, "kind": "entry", "id": "e2", "role": "note", "text": "old note"},
        {"v": SCHEMA_VERSION, "seq": 3, "ts": made, "kind": "entry", "id": "e3", "role": "note", "text": "kept note"},
        {"v": SCHEMA_VERSION, "seq": 4, "ts": deleted_at, "kind": "patch", "id": "e2", "deleted": True},
    ]


def test_an_entry_deleted_at_no_time_is_pruned_as_a_session_deleted_at_no_time_is() -> None:
    """A patch dated NaN, infinity or 1e300 kept its entry for good (prune's own float(): NaN <= cutoff is
    False), while one dated -5, True or a string went at once, and so did a whole session deleted at any of
    these times (replay reads it as deleted at 0). Every one of them now counts as 0 for both."""
    for stamp in NOT_TIMES:
        records = _journal(stamp)
        kept = prune_records("s", records, CUTOFF, now=NOW)
        assert kept is not None, stamp
        assert [r["id"] for r in kept if r.get("kind") == "entry"] == ["e3"], stamp
        session = [
            *records,
            {"v": SCHEMA_VERSION, "seq": 5, "ts": stamp, "kind": "session", "id": "s", "deleted": True},
        ]
        plan = plan_session("s", session, CUTOFF)
        assert plan is not None and plan.action == "remove session", stamp


def test_an_entry_deleted_after_the_cutoff_stays() -> None:
    """The same patch dated an hour ago (a real time after the cutoff) keeps its entry."""
    assert prune_records("s", _journal(NOW - 3_600), CUTOFF, now=NOW) is None
