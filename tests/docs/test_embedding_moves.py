"""What a background embedder's pass reads when the catalog moves under it: the documents changed, not every row."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pytest
import trio

from ctxtrio.docs.service import repository_of
from ctxtrio.store.vectors import Tally, VectorRow, VectorStore

from .conftest import opened
from .embedder import finish, held_backlog, paragraphs, semantic, step

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio.docs.embedding import SemanticIndex


#: The embedder retries and polls quickly (conftest's fixture: real time here), a batch in one request.
pytestmark = pytest.mark.usefixtures("quick_retries", "one_request_a_batch")


def count_full_reads(
    monkeypatch: pytest.MonkeyPatch, read: list[str], running: list[SemanticIndex] | None = None
) -> dict[str, int]:
    """Calls of the VectorStore methods that read every row of the vectors file (``done`` and ``tally`` of every
    journal); the journals ``done`` or ``tally`` was asked of alone go to ``read``. With ``running`` (which holds
    the index once it runs), each full read is also counted under ``pass N``: the passes it had finished."""
    calls = {"done": 0, "counts": 0, "drop_except": 0, "tally": 0}
    done, counts, drop_except, tally = VectorStore.done, VectorStore.counts, VectorStore.drop_except, VectorStore.tally

    def full(name: str) -> None:
        if threading.current_thread() is threading.main_thread():
            return  # the test's own look, on the event loop (the embedder reads in worker threads)
        calls[name] += 1
        if running:
            key = f"pass {running[0].passes}"
            calls[key] = calls.get(key, 0) + 1

    def counted_done(self: VectorStore, model: str, dim: int, *, journal: str | None = None) -> dict[str, set[str]]:
        full("done") if journal is None else read.append(journal)  # (the test's own too)
        return done(self, model, dim, journal=journal)

    def counted_tally(self: VectorStore, model: str, dim: int, *, journal: str | None = None) -> dict[str, Tally]:
        full("tally") if journal is None else read.append(journal)
        return tally(self, model, dim, journal=journal)

    def counted_counts(self: VectorStore, model: str, dim: int) -> tuple[int, int, int]:
        full("counts")
        return counts(self, model, dim)

    def counted_drop(self: VectorStore, *args: object, **kwargs: object) -> int:
        full("drop_except")
        return drop_except(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorStore, "done", counted_done)
    monkeypatch.setattr(VectorStore, "tally", counted_tally)
    monkeypatch.setattr(VectorStore, "counts", counted_counts)
    monkeypatch.setattr(VectorStore, "drop_except", counted_drop)
    return calls


def rows_of(index: SemanticIndex, word: str) -> set[str]:
    """The journals with rows whose document's id holds ``word``."""
    found = index._vectors.done(index.model, index._dim or 0)
    return {journal for journal in found if word in journal}


async def test_ingests_during_a_backfill_do_not_read_every_row_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three documents ingested one by one during a backfill, each taken next: the pass reads what each
    added, not the whole vectors file again."""
    fake = held_backlog()
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=paragraphs(400), title="backlog", doc_id="backlog")
        read: list[str] = []
        calls = count_full_reads(monkeypatch, read)
        async with semantic(ctx, fake) as index:
            await step(fake, 2)  # two batches of the backlog (the first gave the dimension): held at its third
            for n in range(3):
                await ctx.documents.ingest(text=f"# late{n}\n\nZebrafish{n} regrow fins.\n", doc_id=f"late{n}")
                # The batch held lands and the pass sees the move; it takes late{n} next, then the backlog again.
                await step(fake, 2)
                assert rows_of(index, f"late{n}"), f"late{n} waited for the backlog"
            await finish(fake, index)
    late = [max(n for n, text in enumerate(fake.embedded) if f"zebrafish{k}" in text.casefold()) for k in range(3)]
    backlog = [n for n, text in enumerate(fake.embedded) if "topic" in text]
    assert max(backlog) > max(late), "the late documents waited for the backlog"
    assert len(fake.embedded) == len(set(fake.embedded))
    # One full read when the first batch gave the dimension, one to find the pass caught up (and a drop_except
    # when the pass began): a tally, done and counts in one walk. On 9b845d0 before, a done and a counts at each
    # of these (2 and 2); before 550caa1, one of each more for every ingest: 5, 5 and 6.
    assert calls["done"] + calls["counts"] == 0 and calls["tally"] <= 2 and calls["drop_except"] <= 3, calls
    # What it read instead: the rows of the documents ingested meanwhile (none yet), each once (late0 may
    # come with the full read the dimension's arrival makes).
    names = [journal.split("/")[1] for journal in read]
    assert len(names) == len(set(names)) and {"late1", "late2"} <= set(names) <= {"late0", "late1", "late2"}, read


async def test_a_document_replaced_and_one_forgotten_during_a_backfill(tmp_path: Path) -> None:
    """A document edited and ingested again, and one forgotten, while a backfill runs: their old rows go,
    the edited one's unchanged texts are not sent again, and the counts match the catalog at the end."""
    fake = held_backlog()
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=paragraphs(200), title="backlog", doc_id="backlog")
        await ctx.documents.ingest(text="# sturgeon\n\nSturgeon live long.\n\n## Age\n\nA century.\n", doc_id="fish")
        await ctx.documents.ingest(text="# gone\n\nWombats dig burrows.\n", doc_id="gone")
        async with semantic(ctx, fake) as index:
            await step(fake, 3)  # the newest first: "gone" (which gave the dimension), "fish", a batch of the backlog
            assert rows_of(index, "gone") and rows_of(index, "fish")
            old_fish, during = rows_of(index, "fish"), index.passes
            await ctx.documents.ingest(
                text="# sturgeon\n\nSturgeon live long.\n\n## Age\n\nTwo centuries.\n", doc_id="fish"
            )
            await ctx.documents.forget("gone")
            await step(fake, 3)
            assert index.passes == during, "the pass that saw the changes is the one that had the backlog"
            await finish(fake, index)
            assert not rows_of(index, "gone")
            assert rows_of(index, "fish") and not rows_of(index, "fish") & old_fish
            status = index.status()
            assert (
                status.chunks_embedded
                == status.chunks_total
                == sum(entry.info.chunks for entry in repository_of(ctx.documents).state.docs.values())
            )
    assert len(fake.embedded) == len(set(fake.embedded)), "an unchanged text was sent again"


async def test_a_replace_and_a_forget_during_a_backfill_read_no_other_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document edited and ingested again and one forgotten, mid-pass: the pass drops their rows by journal and
    takes their counts away, reading no other row (before, a drop_except and a counts over every row, ~0.8 s at
    600,000 rows: stress/vector_moves.py); the counts still match the file, and no text is sent twice."""
    fake = held_backlog()
    running: list[SemanticIndex] = []
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=paragraphs(400), title="backlog", doc_id="backlog")
        await ctx.documents.ingest(text="# sturgeon\n\nSturgeon live long.\n\n## Age\n\nA century.\n", doc_id="fish")
        await ctx.documents.ingest(text="# gone\n\nWombats dig burrows.\n", doc_id="gone")
        file_counts, drop_journals = VectorStore.counts, VectorStore.drop_journals
        calls = count_full_reads(monkeypatch, [], running)
        after_drop: list[tuple[int, int]] = []

        def dropped(self: VectorStore, model: str, dim: int, journals: list[str], **kwargs: Any) -> object:
            # What context_status says the moment the rows are gone, and what the file holds then.
            result = drop_journals(self, model, dim, journals, **kwargs)
            after_drop.append((running[0].status().chunks_embedded, file_counts(self, model, dim)[0]))
            return result

        monkeypatch.setattr(VectorStore, "drop_journals", dropped)
        async with semantic(ctx, fake) as index:
            running.append(index)
            # "gone" gave the dimension (that pass ended there); the next read every row, embedded "fish" and a batch
            # of the backlog, and is held at its next batch.
            await step(fake, 3)
            assert rows_of(index, "gone") and rows_of(index, "fish")
            during = index.passes
            before = dict(calls)
            await ctx.documents.ingest(
                text="# sturgeon\n\nSturgeon live long.\n\n## Age\n\nTwo centuries.\n", doc_id="fish"
            )
            await ctx.documents.forget("gone")
            await step(fake, 3)  # the batch held lands, the pass sees both moves, embeds the new "fish" and goes on
            assert index.passes == during, "the backlog ended before the pass saw the changes"
            status = index.status()
            held = index._vectors.counts(index.model, index._dim or 0)
            await finish(fake, index)
            assert not rows_of(index, "gone")
    # Full reads in the pass that saw the replace and the forget: none after they came (on main: a drop_except
    # and a counts).
    assert calls.get(f"pass {during}", 0) == before.get(f"pass {during}", 0), calls
    # What context_status said then was the file's count (the pass held at a request: no batch being stored).
    assert status.chunks_embedded == held[0] and status.chunks_refused == held[1] == 0, (status, held)
    # Never more than the file holds, even while the drop runs: the counts of what went are taken away first (a
    # status read between the drop and the count's update said 10 embedded while the file held 8).
    assert after_drop and all(said <= held_then for said, held_then in after_drop), after_drop
    assert len(fake.embedded) == len(set(fake.embedded)), "an unchanged text was sent again"


async def test_another_process_rows_of_a_new_document_count_as_stored(tmp_path: Path) -> None:
    """A document whose rows another process (a second server on the data dir) stored, one chunk refused, before
    this pass saw it ingested: context_status counts them as the file does, refused apart, during that same pass
    (before, all as embedded and none of its vectors, until the next pass counted every row)."""
    fake = held_backlog()
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=paragraphs(400), title="backlog", doc_id="backlog")
        async with semantic(ctx, fake) as index:
            await step(fake, 1)  # the backlog's first batch gave the dimension; its pass ends at the next move
            await ctx.documents.ingest(text="# nudge\n\nA move.\n", doc_id="nudge")
            await step(fake, 1)  # the next pass read every row and is held at "nudge"
            during, dim = index.passes, index._dim or 0
            assert during >= 1 and index.state == "embedding" and dim
            text = "\n\n".join(
                f"## {title}\n\n" + " ".join(f"Otters {title.casefold()} word{n}." for n in range(30))
                for title in ("Sleep", "Float", "Food")
            )
            assert (await ctx.documents.ingest(text=text, doc_id="peer")).doc.chunks >= 2
            # No checkpoint from the ingest's answer to the peer's commit: the pass sees both at its next batch.
            journal = repository_of(ctx.documents).journal(repository_of(ctx.documents).entry("peer"))
            peer = VectorStore(ctx.data.vectors_path)
            peer.open()
            peer.add(index.model, dim, [VectorRow(journal, "0", n, 0, 1, [1.0] + [0.0] * (dim - 1)) for n in (0, 1)])
            peer.add(index.model, dim, [VectorRow(journal, "1", -1, 0, 1, None)])
            peer.close()
            embedded, vectors = index.status().chunks_embedded, index.status().vectors
            await step(fake, 1)  # the batch held lands; the pass sees the new document and what the peer stored
            status = index.status()
            assert index.passes == during, "the refusal was counted only by the next pass's full count"
            assert status.chunks_refused == 1
            assert status.chunks_embedded >= embedded + 1 and status.vectors >= vectors + 2
            fake.release()
            with trio.fail_after(30):  # (not caught_up(): one chunk stays refused)
                while index.status().state != "caught up":
                    await trio.sleep(0.05)
            status = index.status()
            assert status.chunks_refused == 1 and status.chunks_embedded == status.chunks_total - 1
            assert index._vectors.counts(index.model, dim) == (status.chunks_embedded, 1, status.vectors)


async def test_a_replaced_documents_rows_another_process_dropped_first_leave_the_counts_right(tmp_path: Path) -> None:
    """The opposite process: a second server drops a replaced document's old rows before this pass sees the
    replace; this pass then finds none to drop and takes away what it had counted of them, so context_status
    still says what the file holds (it does not take the file's rows of the journal, which are none by then)."""
    fake = held_backlog()
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=paragraphs(400), title="backlog", doc_id="backlog")
        await ctx.documents.ingest(text="# sturgeon\n\nSturgeon live long.\n\n## Age\n\nA century.\n", doc_id="fish")
        async with semantic(ctx, fake) as index:
            await step(fake, 1)  # "fish" (the newest) gave the dimension and ended its pass; the next read every row
            during, dim = index.passes, index._dim or 0
            assert during >= 1 and index.state == "embedding" and dim
            (old,) = rows_of(index, "fish")
            await ctx.documents.ingest(text="# sturgeon\n\nSturgeon live long.\n\n## Age\n\nAges.\n", doc_id="fish")
            peer = VectorStore(ctx.data.vectors_path)  # the pass is held at a request: before it looks
            peer.open()
            assert peer.drop_journals(index.model, dim, [old], forgotten=lambda _journal: False) > 0
            peer.close()
            await step(fake, 2)  # the batch held lands, the pass sees the replace and embeds the new generation next
            assert rows_of(index, "fish") not in (set(), {old})
            status = index.status()
            held = index._vectors.counts(index.model, dim)
            assert index.passes == during, "the backlog ended before the pass saw the replace"
            assert status.chunks_embedded == held[0] and status.chunks_refused == held[1] == 0
            assert status.vectors == held[2], (status, held)
            await finish(fake, index)
