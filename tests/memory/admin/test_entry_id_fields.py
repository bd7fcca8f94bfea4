"""A record's entry-id lists (state/base.ENTRY_ID_FIELDS) are read alike by import's remap, its check, and prune."""

from __future__ import annotations

import pytest

from ctxtrio._errors import InputError
from ctxtrio.memory.admin.archive import check_records, remap
from ctxtrio.memory.admin.prune import prune_records
from ctxtrio.memory.semantic import entry_of as semantic_entry_of
from ctxtrio.memory.state.base import ENTRY_ID_FIELDS, entry_key, entry_of
from ctxtrio.store.records import JSON, SCHEMA_VERSION, Record

DAY = 86_400.0
MADE = 1_780_000_000.0


def _summary(field: str, listed: list[JSON], ts: float) -> Record:
    return {
        "v": SCHEMA_VERSION,
        "seq": 9,
        "ts": ts,
        "kind": "entry",
        "id": "e9",
        "role": "summary",
        "text": "s",
        field: listed,
    }


def test_each_entry_id_field_is_remapped_checked_and_dates_a_retirement() -> None:
    """rvA25: ("folds", "merges") was written out in archive's remap, its check and prune's dating, so a third
    field could be missed by one of them; each now reads ENTRY_ID_FIELDS. For each field: import renumbers the
    ids it lists, its check refuses a list of non-ids, and prune dates what it names by the record listing it."""
    assert ENTRY_ID_FIELDS == ("folds", "merges")
    for field in ENTRY_ID_FIELDS:
        note: Record = {
            "v": SCHEMA_VERSION,
            "seq": 4,
            "ts": MADE,
            "kind": "entry",
            "id": "e4",
            "role": "note",
            "text": "n",
        }
        (_, summary), changed = remap([note, _summary(field, ["e4"], MADE)], "s")
        assert summary.body[field] == ["e1"] and changed == 2, field
        with pytest.raises(InputError, match=f"entry e9 {field} something that is not a list of entry ids"):
            check_records("s", [_summary(field, ["e4", "not an id!"], MADE)], now=MADE)
    # A note folded a week ago by a summary written yesterday: dated by the summary, kept at a 2-day cutoff.
    session: Record = {"v": SCHEMA_VERSION, "seq": 1, "ts": MADE, "kind": "session", "id": "s", "title": "s"}
    first: Record = {
        "v": SCHEMA_VERSION,
        "seq": 2,
        "ts": MADE,
        "kind": "entry",
        "id": "e2",
        "role": "note",
        "text": "a",
    }
    other: Record = {
        "v": SCHEMA_VERSION,
        "seq": 3,
        "ts": MADE,
        "kind": "entry",
        "id": "e3",
        "role": "note",
        "text": "b",
    }
    folded: Record = {**_summary("folds", ["e2", "e3"], MADE + 6 * DAY), "seq": 4, "id": "e4"}
    now = MADE + 7 * DAY
    assert prune_records("s", [session, first, other, folded], now - 2 * DAY, now=now) is None
    assert prune_records("s", [session, first, other, folded], now - 0.5 * DAY, now=now) is not None


def test_a_vector_key_gives_back_its_entry_id() -> None:
    """entry_of (beside entry_key in state/base, so memory/ranking reads keys with it instead of its own
    partition) undoes entry_key; memory/semantic still offers it (stress/recall_bench imports it there)."""
    key = entry_key("e12", "Decision: keep cookies")
    assert entry_of(key) == semantic_entry_of(key) == "e12" and key.startswith("e12#")
