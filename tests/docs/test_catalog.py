"""Replaying the document catalog: the last commit wins, forget drops cursors, cursors are per generation;
stale cursor records are dropped without changing what the catalog says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtrio.docs import catalog
from ctxtrio.docs.catalog import CatalogState, commit_record, cursor_record, drop_stale_cursors, forget_record
from ctxtrio.docs.model import DocumentInfo
from ctxtrio.store.ops import ENDS_AT
from ctxtrio.store.records import NewRecord, Record, encode_record

if TYPE_CHECKING:
    import pytest


def stored(record: NewRecord, seq: int) -> Record:
    return encode_record(record, seq=seq, ts=1000.0 + seq)[0]


def info(doc_id: str, chunks: int = 3) -> DocumentInfo:
    return DocumentInfo(doc_id, "T", "inline", chunks, 100, 30, 0.0)


def test_last_commit_wins_and_reports_the_replaced_generation() -> None:
    """A second commit of one doc makes its generation current and names the old one obsolete."""
    state = CatalogState()
    assert state.apply(stored(commit_record(info("a"), "g1"), 1)) is None
    assert state.apply(stored(commit_record(info("a", 5), "g2"), 2)) == ("a", "g1")
    assert state.docs["a"].gen == "g2" and state.docs["a"].info.chunks == 5
    assert state.docs["a"].info.ingested_at == 1002.0
    assert state.committed == {("a", "g1"), ("a", "g2")}


def test_forget_removes_doc_and_its_cursors_only() -> None:
    """forget drops the document and every cursor of it, and no other document's cursors."""
    state = CatalogState()
    for seq, record in enumerate(
        [
            commit_record(info("a"), "g1"),
            commit_record(info("b"), "h1"),
            cursor_record("a", "g1", "s1", 2),
            cursor_record("a", "g1", "", 1),
            cursor_record("b", "h1", "s1", 1),
        ],
        start=1,
    ):
        state.apply(stored(record, seq))
    assert state.apply(stored(forget_record("a"), 9)) == ("a", "g1")
    assert "a" not in state.docs
    assert list(state.cursors) == [("b", "s1")]


def test_cursor_is_per_session_and_per_generation() -> None:
    """Cursors of two sessions are independent; a cursor of a replaced generation reads as 0."""
    state = CatalogState()
    state.apply(stored(commit_record(info("a"), "g1"), 1))
    state.apply(stored(cursor_record("a", "g1", "s1", 2), 2))
    state.apply(stored(cursor_record("a", "g1", "s2", 1), 3))
    assert (state.position("a", "s1"), state.position("a", "s2"), state.position("a", "")) == ((2, 0), (1, 0), (0, 0))
    state.apply(stored(commit_record(info("a"), "g2"), 4))
    assert state.position("a", "s1") == (0, 0)


def test_version_changes_only_with_documents() -> None:
    """The version moves on commit and forget, not on cursor records."""
    state = CatalogState()
    state.apply(stored(commit_record(info("a"), "g1"), 1))
    version = state.version
    state.apply(stored(cursor_record("a", "g1", "", 1), 2))
    assert state.version == version
    state.apply(stored(forget_record("a"), 3))
    assert state.version == version + 1


def test_malformed_records_are_ignored() -> None:
    """Records missing fields change nothing."""
    state = CatalogState()
    state.apply({"kind": "commit", "doc": "a", "gen": "g"})
    state.apply({"kind": "cursor", "doc": "a", "gen": "g", "session": "", "next": "x"})
    state.apply({"kind": "forget"})
    assert state.docs == {} and state.cursors == {}


def test_a_cursor_record_with_a_negative_chunk_is_ignored() -> None:
    """A hand-edited ``next: -1`` is no window's cursor: taken as an index it read the document from its
    end (doc_window showed json's last chunk, #19 of 20); the cursor before it stands."""
    state = CatalogState()
    state.apply(stored(commit_record(info("a"), "g1"), 1))
    state.apply(stored(cursor_record("a", "g1", "", 2), 2))
    state.apply({"kind": "cursor", "doc": "a", "gen": "g1", "session": "", "next": -1, "at": 5})
    assert state.position("a", "") == (2, 0)


def test_dropping_stale_cursors_keeps_what_replays_to_the_same_state() -> None:
    """Replaced cursors and cursors before a forget go; commits, forgets and the last cursors stay; replay agrees."""
    records = [
        stored(commit_record(info("a"), "g1"), 1),
        stored(cursor_record("a", "g1", "s", 1), 2),
        stored(cursor_record("a", "g1", "s", 2), 3),
        stored(cursor_record("a", "g1", "t", 1), 4),
        stored(commit_record(info("b"), "g1"), 5),
        stored(cursor_record("b", "g1", "s", 1), 6),
        stored(forget_record("b"), 7),
        stored(cursor_record("a", "g1", "s", 3), 8),
    ]
    kept = drop_stale_cursors(records)
    assert kept is not None and [record["seq"] for record in kept] == [1, 4, 5, 7, 8]
    assert drop_stale_cursors(kept) is None  # nothing left to drop: the journal is left alone
    whole, compacted = CatalogState(), CatalogState()
    for record in records:
        whole.apply(record)
    for record in kept:
        compacted.apply(record)
    assert (compacted.docs, compacted.cursors, compacted.committed) == (whole.docs, whole.cursors, whole.committed)


def test_dropping_stale_cursors_keeps_the_cursor_a_malformed_record_after_it_leaves_standing() -> None:
    """Replay ignores a cursor record no window wrote (hand-edited, damaged), so the one before it stands;
    the compaction keeps that one too, or the read position would move to the document's start."""
    records: list[Record] = [
        stored(commit_record(info("a"), "g1"), 1),
        stored(cursor_record("a", "g1", "s", 1), 2),
        stored(cursor_record("a", "g1", "s", 2, 40), 3),
        {"kind": "cursor", "doc": "a", "gen": "g1", "session": "s", "next": -1, "seq": 4},
        {"kind": "cursor", "doc": "a", "gen": "g1", "session": "s", "next": "x", "seq": 5},
    ]
    kept = drop_stale_cursors(records)
    assert kept is not None and [record["seq"] for record in kept] == [1, 3, 4, 5]
    whole, compacted = CatalogState(), CatalogState()
    for record in records:
        whole.apply(record)
    for record in kept:
        compacted.apply(record)
    assert compacted.position("a", "s") == whole.position("a", "s") == (2, 40)


def test_compaction_is_due_only_past_the_slack(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replaced cursor records beyond CURSOR_SLACK make a compaction due; live ones never do."""
    monkeypatch.setattr(catalog, "CURSOR_SLACK", 3)
    state = CatalogState()
    state.apply(stored(commit_record(info("a"), "g1"), 1))
    for session in range(10):  # ten live cursors: nothing to drop
        state.apply(stored(cursor_record("a", "g1", f"s{session}", 1), 2 + session))
    assert not state.compaction_due()
    for position in range(4):
        state.apply(stored(cursor_record("a", "g1", "s0", 2 + position), 20 + position))
    assert state.compaction_due()


def test_changed_since_names_the_documents_each_version_changed() -> None:
    """changed_since(v): the documents committed or forgotten after version v; cursors change none."""
    state = CatalogState()
    state.apply(stored(commit_record(info("a"), "g1"), 1))
    seen = state.version
    state.apply(stored(commit_record(info("b"), "h1"), 2))
    state.apply(stored(cursor_record("a", "g1", "s1", 2), 3))
    state.apply(stored(forget_record("a"), 4))
    assert state.changed_since(seen) == {"a", "b"}
    assert state.changed_since(state.version) == set()
    assert state.changed_since(state.version + 5) == {"a", "b"}  # a version this state never reached: all
    fresh = CatalogState(version=state.version + 1)  # a rewritten catalog replayed afresh
    fresh.apply(stored(commit_record(info("b"), "h1"), 1))
    assert fresh.changed_since(fresh.version - 1) == {"b"}
    assert fresh.changed_since(seen) == {"b"}  # before the fresh state began: all it has seen


def test_changes_list_every_document_only_when_what_changed_cannot_be_told() -> None:
    """changes(v): the documents changed since v and which are current; every document only for a first look or a
    version the state never had (a catalog replayed afresh)."""
    state = CatalogState()
    for seq, doc in enumerate(f"d{n:02d}" for n in range(20)):
        state.apply(stored(commit_record(info(doc), "g1"), seq + 1))
    first = state.changes(None)
    assert first.listing == frozenset(state.docs) and len(first.listing) == 20
    state.apply(stored(commit_record(info("d03"), "g2"), 30))  # replaced
    state.apply(stored(commit_record(info("new"), "g1"), 31))  # added
    state.apply(stored(forget_record("d07"), 32))  # forgotten
    later = state.changes(first.version)
    assert (later.version, later.changed, later.current, later.listing) == (
        first.version + 3,
        ["d03", "d07", "new"],
        frozenset({"d03", "new"}),
        None,
    )
    assert state.changes(later.version).changed == [] and state.changes(later.version).listing is None
    fresh = CatalogState(version=state.version + 1)  # the catalog rewritten, replayed afresh
    fresh.apply(stored(commit_record(info("d00"), "g1"), 1))
    assert fresh.changes(later.version).listing == frozenset({"d00"})


def test_documents_by_source_follow_commits_and_forgets() -> None:
    """from_source names the current documents read from a file: a re-commit from another file or a forget moves them."""
    state = CatalogState()

    def read_from(doc_id: str, source: str) -> DocumentInfo:
        return DocumentInfo(doc_id, "T", source, 3, 100, 30, 0.0)

    for seq, record in enumerate(
        [
            commit_record(read_from("a", "/x.md"), "g1"),
            commit_record(read_from("b", "/x.md"), "h1"),
            commit_record(read_from("c", "/y.md"), "k1"),
            commit_record(read_from("b", "/y.md"), "h2"),  # b now read from another file
            forget_record("a"),
        ],
        start=1,
    ):
        state.apply(stored(record, seq))
    assert state.from_source("/x.md") == []
    assert sorted(entry.doc_id for entry in state.from_source("/y.md")) == ["b", "c"]
    assert state.sources.keys() == {"/y.md"}


def _ended(record: NewRecord, end: int | None) -> NewRecord:
    return record if end is None else NewRecord(record.kind, {**record.body, ENDS_AT: end}, id_prefix=record.id_prefix)


def test_unlanded_checks_the_last_commit_of_each_document_and_walks_back_to_a_forget() -> None:
    """Only a document's last commit is checked, and while it has not landed the ones before it, back to a
    forget; older commits and commits without an end are never checked."""
    records = [
        stored(_ended(commit_record(info("a"), "g1"), 10), 1),  # 0
        stored(_ended(commit_record(info("a"), "g2"), 10), 2),  # 1
        stored(_ended(commit_record(info("a"), "g3"), 10), 3),  # 2: cut short
        stored(commit_record(info("b"), "h1"), 4),  # 3: an older store's commit, no end
        stored(_ended(commit_record(info("c"), "k1"), 10), 5),  # 4
        stored(forget_record("c"), 6),  # 5
        stored(_ended(commit_record(info("c"), "k2"), 10), 7),  # 6: cut short, nothing before the forget
        stored(cursor_record("a", "g3", "", 1), 8),  # 7
    ]
    asked: list[object] = []

    def landed(record: Record) -> bool:
        asked.append(record["gen"])
        return record["gen"] not in ("g3", "k2")

    assert catalog.unlanded(records, landed) == {2, 6}
    assert asked == ["k2", "g3", "g2"]
    state = CatalogState()
    for position, record in enumerate(records):
        if position not in {2, 6}:
            state.apply(record)
    assert {doc: entry.gen for doc, entry in state.docs.items()} == {"a": "g2", "b": "h1"}


def test_a_title_stored_with_controls_is_read_as_one_harmless_line() -> None:
    """A title stored before titles were made harmless (or written by hand) is read with its controls as
    escapes and its whitespace as single spaces: every answer and resource shows the catalog's title."""
    state = CatalogState()
    raw = DocumentInfo("a", "T\x1b[2J\u202eevil\n- b  \x9b", "/tmp/x\x1b.md", 3, 100, 30, 0.0)
    state.apply(stored(commit_record(raw, "g1"), 1))
    assert state.docs["a"].info.title == "T\\x1b[2J\\u202eevil - b \\x9b"
    assert state.docs["a"].info.source == "/tmp/x\x1b.md"  # the path finds the file again: kept as stored
