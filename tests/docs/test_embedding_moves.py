"""What a background embedder's pass reads when the catalog moves under it: the documents changed, not every row."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
import trio

from ctxtrio.docs.service import repository_of
from ctxtrio.store.vectors import VectorStore
from testkit.fake_embeddings import FakeEmbeddings
from tests.docs.test_embedding import (  # quick_retries: a fixture
    _paragraphs,
    caught_up,
    quick_retries,  # noqa: F401
    semantic,
)

from .conftest import opened

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtrio.docs.embedding import SemanticIndex

#: The embedder retries and polls quickly (test_embedding's fixture: real time here).
pytestmark = pytest.mark.usefixtures("quick_retries")


def count_full_reads(monkeypatch: pytest.MonkeyPatch, read: list[str]) -> dict[str, int]:
    """Calls of the VectorStore methods that read every row of the vectors file (``done`` of every journal);
    the journals ``done`` was asked of alone go to ``read``."""
    calls = {"done": 0, "counts": 0, "drop_except": 0}
    done, counts, drop_except = VectorStore.done, VectorStore.counts, VectorStore.drop_except

    def counted_done(self: VectorStore, model: str, dim: int, *, journal: str | None = None) -> dict[str, set[str]]:
        calls["done"] += journal is None
        read.extend([journal] if journal is not None else [])
        return done(self, model, dim, journal=journal)

    def counted_counts(self: VectorStore, model: str, dim: int) -> tuple[int, int, int]:
        calls["counts"] += 1
        return counts(self, model, dim)

    def counted_drop(self: VectorStore, *args: object, **kwargs: object) -> int:
        calls["drop_except"] += 1
        return drop_except(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorStore, "done", counted_done)
    monkeypatch.setattr(VectorStore, "counts", counted_counts)
    monkeypatch.setattr(VectorStore, "drop_except", counted_drop)
    return calls


async def requests_grow(fake: FakeEmbeddings, by: int) -> None:
    """Wait until the endpoint was asked ``by`` more requests (batches landed meanwhile)."""
    target = len(fake.requests) + by
    with trio.fail_after(30):
        while len(fake.requests) < target:
            await trio.sleep(0.01)


def rows_of(index: SemanticIndex, word: str) -> set[str]:
    """The journals with rows whose document's id holds ``word``."""
    found = index._vectors.done(index.model, index._dim or 0)
    return {journal for journal in found if word in journal}


async def test_ingests_during_a_backfill_do_not_read_every_row_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three documents ingested one by one during a backfill, each taken next: the pass reads what each
    added, not the whole vectors file again."""
    fake = FakeEmbeddings(delay_s=0.05)
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=_paragraphs(400), title="backlog", doc_id="backlog")
        read: list[str] = []
        calls = count_full_reads(monkeypatch, read)
        async with semantic(ctx, fake) as index:
            await requests_grow(fake, 2)
            for n in range(3):
                await ctx.documents.ingest(text=f"# late{n}\n\nZebrafish{n} regrow fins.\n", doc_id=f"late{n}")
                await requests_grow(fake, 3)
            await caught_up(index)
    late = [max(n for n, text in enumerate(fake.embedded) if f"zebrafish{k}" in text.casefold()) for k in range(3)]
    backlog = [n for n, text in enumerate(fake.embedded) if "topic" in text]
    assert max(backlog) > max(late), "the late documents waited for the backlog"
    assert len(fake.embedded) == len(set(fake.embedded))
    # One full read when the first batch gave the dimension, one to find the pass caught up (and a drop_except
    # when the pass began). On main before, one of each more for every ingest: 5, 5 and 6.
    assert calls["done"] <= 2 and calls["counts"] <= 2 and calls["drop_except"] <= 3, calls
    # What it read instead: the rows of the documents ingested meanwhile (none yet), each once (late0 may
    # come with the full read the dimension's arrival makes).
    names = [journal.split("/")[1] for journal in read]
    assert len(names) == len(set(names)) and {"late1", "late2"} <= set(names) <= {"late0", "late1", "late2"}, read


async def test_a_document_replaced_and_one_forgotten_during_a_backfill(tmp_path: Path) -> None:
    """A document edited and ingested again, and one forgotten, while a backfill runs: their old rows go,
    the edited one's unchanged texts are not sent again, and the counts match the catalog at the end."""
    fake = FakeEmbeddings(delay_s=0.05)
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        await ctx.documents.ingest(text=_paragraphs(200), title="backlog", doc_id="backlog")
        await ctx.documents.ingest(text="# sturgeon\n\nSturgeon live long.\n\n## Age\n\nA century.\n", doc_id="fish")
        await ctx.documents.ingest(text="# gone\n\nWombats dig burrows.\n", doc_id="gone")
        async with semantic(ctx, fake) as index:
            with trio.fail_after(30):  # the newest, "gone" and "fish", come first
                while not (index._dim and rows_of(index, "gone") and rows_of(index, "fish")):
                    await trio.sleep(0.01)
            old_fish = rows_of(index, "fish")
            await ctx.documents.ingest(
                text="# sturgeon\n\nSturgeon live long.\n\n## Age\n\nTwo centuries.\n", doc_id="fish"
            )
            await ctx.documents.forget("gone")
            await requests_grow(fake, 3)
            await caught_up(index)
            assert not rows_of(index, "gone")
            assert rows_of(index, "fish") and not rows_of(index, "fish") & old_fish
            status = index.status()
            assert (
                status.chunks_embedded
                == status.chunks_total
                == sum(entry.info.chunks for entry in repository_of(ctx.documents).state.docs.values())
            )
    assert len(fake.embedded) == len(set(fake.embedded)), "an unchanged text was sent again"
