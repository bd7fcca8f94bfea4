"""Replaying session journals into memory: records, patches, folds, totals."""

from __future__ import annotations

from ctxtrio.memory.state.base import entry_line
from ctxtrio.memory.state.columns import SessionState
from ctxtrio.store.records import JSON, Record, StoredRecord
from ctxtrio.text.tokens import TokenModel

MODEL = TokenModel.cold()


class Journal:
    """Builds stored records the way the writer would (seq, ids, offsets)."""

    def __init__(self) -> None:
        self.records: list[StoredRecord] = []
        self.offset = 0

    def add(self, kind: str, body: dict[str, JSON], record_id: str | None = None) -> str:
        seq = len(self.records) + 1
        data: Record = {"v": 1, "seq": seq, "ts": 1000.0 + seq, "kind": kind, "id": record_id or f"e{seq}", **body}
        self.records.append(StoredRecord(self.offset, self.offset + 100, data))
        self.offset += 100
        return str(data["id"])

    def entry(self, text: str, **fields: JSON) -> str:
        body: dict[str, JSON] = {"text": text, "role": "note", "tags": [], "pinned": False}
        body.update(fields)
        return self.add("entry", body)

    def patch(self, target: str, **fields: JSON) -> None:
        self.add("patch", dict(fields), target)

    def state(self) -> SessionState:
        state = SessionState("s1", MODEL)
        state.apply(self.records, self.offset)
        return state


def test_entries_count_tokens_of_their_recall_line() -> None:
    """Each entry's tokens are the estimate of its whole line; live totals add them up."""
    journal = Journal()
    first = journal.entry("Keep cookies for auth", role="decision", tags=["auth"], pinned=True)
    journal.entry("Retry twice on timeout")
    state = journal.state()
    line = entry_line(first, "decision", True, ["auth"], "Keep cookies for auth")
    assert line == f"[{first} decision pinned #auth] Keep cookies for auth\n"
    assert state.items[first].tokens == MODEL.estimate(line)
    assert state.live_count == 2
    assert state.live_tokens == sum(item.tokens for item in state.order)
    assert state.pinned_tokens == state.items[first].tokens and list(state.pins) == [first]
    assert state.applied_offset == journal.offset


def test_session_record_sets_title_and_last_write_wins() -> None:
    """Later session records rename; timestamps track creation and last activity."""
    journal = Journal()
    journal.add("session", {"title": "first"}, "s1")
    journal.entry("x")
    journal.add("session", {"title": "second"}, "s1")
    state = journal.state()
    assert state.title == "second"
    assert state.exists and state.created == 1001.0 and state.last_activity == 1003.0


def test_a_title_stored_with_controls_is_read_as_one_harmless_line() -> None:
    """A session title stored before titles were made harmless is read with its controls as escapes."""
    journal = Journal()
    journal.add("session", {"title": "S\x1b[2J\u202eevil\nnext"}, "s1")
    assert journal.state().title == "S\\x1b[2J\\u202eevil next"


def test_patches_pin_delete_and_restore() -> None:
    """Pin, delete and restore patches move an entry between the totals."""
    journal = Journal()
    target = journal.entry("alpha")
    journal.patch(target, pinned=True)
    state = journal.state()
    assert state.items[target].pinned and state.pinned_tokens == state.items[target].tokens
    journal.patch(target, deleted=True)
    state = journal.state()
    assert state.items[target].status == "deleted"
    assert (state.live_count, state.deleted, state.live_tokens, len(state.pins)) == (0, 1, 0, 0)
    journal.patch(target, restored=True)
    state = journal.state()
    assert state.items[target].status == "live" and state.items[target].pinned
    assert (state.live_count, state.deleted) == (1, 0)


def test_summary_folds_only_live_unpinned_non_summary_entries() -> None:
    """A fold supersedes what is still foldable when replayed, so racing writers agree."""
    journal = Journal()
    a = journal.entry("a")
    b = journal.entry("b")
    c = journal.entry("c")
    journal.patch(b, pinned=True)
    journal.patch(c, deleted=True)
    summary = journal.entry("sum", role="summary", folds=[a, b, c, "e999"])
    state = journal.state()
    assert state.items[summary].folds == (a,)
    assert state.items[a].superseded_by == summary
    assert state.items[b].status == "live" and state.items[c].status == "deleted"
    assert (state.live_count, state.superseded, state.summaries) == (2, 1, 1)


def test_restoring_a_summary_undoes_its_compaction() -> None:
    """Folded entries come back and the summary is retired; totals match the start."""
    journal = Journal()
    ids = [journal.entry(f"entry {n}") for n in range(4)]
    before = journal.state()
    folds: list[JSON] = list(ids[:3])
    summary = journal.entry("summary of four", role="summary", folds=folds)
    folded = journal.state()
    assert folded.live_count == 2 and folded.superseded == 3
    journal.patch(summary, restored=True)
    after = journal.state()
    assert [after.items[i].status for i in ids] == ["live"] * 4
    assert after.items[summary].status == "deleted"
    assert (after.live_count, after.live_tokens, after.superseded, after.summaries) == (
        before.live_count,
        before.live_tokens,
        0,
        0,
    )


def test_live_text_lookup_ignores_dead_entries() -> None:
    """Duplicate detection finds a live entry with the same stripped text, not a deleted one."""
    journal = Journal()
    first = journal.entry("same text")
    journal.patch(first, deleted=True)
    second = journal.entry("same text")
    state = journal.state()
    found = state.find_live_text("  same text ")
    assert found is not None and found.id == second
    assert state.find_live_text("other") is None


def test_malformed_fields_and_unknown_kinds_are_ignored() -> None:
    """Bad roles fall back to note, bad tags to none; unknown kinds and patches to nothing are skipped."""
    journal = Journal()
    odd = journal.entry("x", role="wizard", tags="not-a-list")
    journal.add("future-kind", {"whatever": 1})
    journal.patch("e404", pinned=True)
    journal.add("entry", {"role": "note"})  # no text: skipped
    state = journal.state()
    assert state.items[odd].role == "note" and state.items[odd].tags == ()
    assert state.live_count == 1


def test_retokenize_recounts_every_entry() -> None:
    """A new token model recounts entries and totals; the same model is a no-op."""
    journal = Journal()
    journal.entry("some words here", pinned=True)
    journal.entry("more words")
    state = journal.state()
    denser = TokenModel.cold(1.0)
    state.retokenize(denser)
    assert state.model is denser
    assert [item.tokens for item in state.order] == [denser.estimate(item.line()) for item in state.order]
    assert state.live_tokens == sum(item.tokens for item in state.order)
    assert state.pinned_tokens == state.order[0].tokens


def test_search_statistics_follow_liveness() -> None:
    """Superseded and deleted entries leave the BM25 statistics and never score."""
    journal = Journal()
    keep = journal.entry("cookie policy")
    gone = journal.entry("cookie jar")
    journal.patch(gone, deleted=True)
    state = journal.state()
    scores = state.index.scores(["cookie"], state.live, state.lengths)
    assert list(scores) == [state.items[keep].ordinal]
    assert state.index.live_docs == 1


def test_ids_other_than_e_seq_are_found() -> None:
    """Imported ids (not e<seq>) and out-of-order seqs still resolve for patches and folds."""
    journal = Journal()
    body: dict[str, JSON] = {"text": "imported note", "role": "note", "tags": [], "pinned": False}
    journal.add("entry", body, "e7")
    plain = journal.entry("plain note")
    journal.patch("e7", pinned=True)
    state = journal.state()
    assert state.items["e7"].pinned and state.items["e7"].text == "imported note"
    assert state.items[plain].text == "plain note" and "e1" not in state.items
    journal.records[0], journal.records[1] = journal.records[1], journal.records[0]
    swapped = journal.state()
    assert swapped.items["e7"].pinned and [item.id for item in swapped.order] == [plain, "e7"]
