"""Which document the background embedder takes next: the newest ingest, looked at again after every batch."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from testkit.fake_embeddings import FakeEmbeddings

from .conftest import opened
from .embedder import caught_up, finish, held_backlog, paragraphs, semantic, step

if TYPE_CHECKING:
    from pathlib import Path

#: The embedder retries and polls quickly (conftest's fixture: real time here), a batch in one request.
pytestmark = pytest.mark.usefixtures("quick_retries", "one_request_a_batch")

LATE = "# zebrafish\n\nZebrafish regrow their fins within weeks.\n"


def sent_at(fake: FakeEmbeddings, word: str) -> list[int]:
    """Positions, among every text the endpoint embedded, of those holding ``word``."""
    return [n for n, text in enumerate(fake.embedded) if word in text.casefold()]


async def test_a_document_ingested_during_a_backfill_is_embedded_before_the_rest_of_it(tmp_path: Path) -> None:
    """A document ingested while a long backfill runs is embedded within a batch or two, not after the
    backlog: the texts of the backlog go on being sent after the late document's."""
    fake = held_backlog()  # (with delay_s on real time, a slow ingest let the backlog end first)
    async with opened(tmp_path, chunk_tokens=50, chunk_overlap_tokens=0) as ctx:
        backlog = await ctx.documents.ingest(text=paragraphs(300), title="backlog", doc_id="backlog")
        async with semantic(ctx, fake) as index:
            await step(fake, 2)  # two batches of the backlog: held at its third
            await ctx.documents.ingest(text=LATE, title="late", doc_id="late")
            await step(fake, 2)  # the batch held lands, the pass sees the move and takes "late" next
            assert sent_at(fake, "zebrafish"), "the late document waited for the backlog"
            await finish(fake, index)
    late, backlog_texts = sent_at(fake, "zebrafish"), sent_at(fake, "topic")
    assert backlog.doc.chunks > 100 and late, fake.requests[-1]
    assert max(backlog_texts) > late[-1], "the late document waited for the whole backlog"
    # Nothing sent twice for all the passes begun again.
    assert len(fake.embedded) == len(set(fake.embedded))


async def test_documents_waiting_together_are_embedded_newest_first(tmp_path: Path) -> None:
    """Two documents ingested before the embedder starts: the one ingested last is embedded first."""
    fake = FakeEmbeddings()
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text="# sturgeon\n\nSturgeon live for a century.\n", title="first", doc_id="first")
        await ctx.documents.ingest(text=LATE, title="late", doc_id="late")
        async with semantic(ctx, fake) as index:
            await caught_up(index)
    assert sent_at(fake, "zebrafish")[-1] < sent_at(fake, "sturgeon")[0], fake.requests
