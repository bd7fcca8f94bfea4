"""Re-ingest is atomic, crashes and cancellation leave the old version, and processes share one data dir."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
import trio

from ctxtrio._errors import NotFoundError
from ctxtrio.docs.chunks import ChunkBatcher
from ctxtrio.docs.folders import ORPHAN_AGE_S
from ctxtrio.docs.repository import Repository

from .conftest import opened

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ctxtrio.docs.model import DocumentInfo
    from ctxtrio.store.reading import ReadResult
    from ctxtrio.store.records import NewRecord
    from ctxtrio.store.results import AppendResult
    from ctxtrio.store.rows import IndexRow

T = TypeVar("T")

OLD = "# Version\n\n" + "\n\n".join(f"Paragraph {n} mentions aardvark{n % 7} and old material." for n in range(300))
NEW = "# Version\n\n" + "\n\n".join(f"Paragraph {n} mentions zebra{n % 5} and new material." for n in range(200))


async def test_readers_see_old_or_new_never_a_mix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a re-ingest has written its chunks but not committed, every read shows the old version."""
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        old = (await docs.ingest(text=OLD, doc_id="v")).doc
        repo: Repository = docs._repo
        real_commit = repo.commit
        reached, release = trio.Event(), trio.Event()

        async def held_commit(
            info: DocumentInfo, gen: str, last: tuple[list[NewRecord], list[list[IndexRow]]] | None = None
        ) -> tuple[AppendResult, int | None]:
            if last is not None:  # the chunks that travel with the commit: durable first, as the writer does
                await repo.store.append(repo.gen_path(info.doc_id, gen), last[0], rows=last[1])
            reached.set()
            await release.wait()
            return await real_commit(info, gen)

        monkeypatch.setattr(repo, "commit", held_commit)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: docs.ingest(text=NEW, doc_id="v"))
            await reached.wait()
            assert len(list((ctx.data.docs / "v").glob("*.jsonl"))) == 2  # new chunks are on disk
            assert (await docs.search("zebra3")).hits == ()
            assert (await docs.search("aardvark3")).hits
            window = await docs.window("v", budget_tokens=100_000)
            assert "".join(chunk.text for chunk in window.chunks) == OLD
            assert (await docs.get("v")).chunks == old.chunks
            release.set()
        assert (await docs.search("aardvark3")).hits == ()
        hits = (await docs.search("zebra3")).hits
        assert hits and all("zebra" in hit.text for hit in hits)
        window = await docs.window("v", start=0, budget_tokens=100_000)
        assert "".join(chunk.text for chunk in window.chunks) == NEW
        assert len(list((ctx.data.docs / "v").glob("*.jsonl"))) == 1  # the old generation is gone


async def test_cancelled_ingest_leaves_the_old_version(tmp_path: Path) -> None:
    """Cancelling a re-ingest after its first batch removes the new file; the old version stays."""
    big = "\n\n".join(f"Line {n} about zebra{n % 5} and many other words to fill." for n in range(20_000))
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        await docs.ingest(text=OLD, doc_id="v")
        with trio.CancelScope() as scope:

            async def cancel_after_first_batch(done: float, total: float) -> None:
                assert done < total
                scope.cancel()

            await docs.ingest(text=big, doc_id="v", progress=cancel_after_first_batch)
        assert scope.cancelled_caught
        assert len(list((ctx.data.docs / "v").glob("*.jsonl"))) == 1
        assert (await docs.search("zebra3")).hits == ()
        window = await docs.window("v", budget_tokens=100_000)
        assert "".join(chunk.text for chunk in window.chunks) == OLD


async def test_crash_before_commit_and_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a restart: uncommitted old files and superseded generations are swept, young ones kept."""
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        await docs.ingest(text=OLD, doc_id="v")
        # A crash between the commit of a re-ingest and the removal of what it replaced:
        monkeypatch.setattr(Repository, "_remove", _no_removal)
        await docs.ingest(text=NEW, doc_id="v")
        superseded = [path for path in (ctx.data.docs / "v").glob("*.jsonl")]
        assert len(superseded) == 2
        # Crashes in the middle of ingests: chunk records, no commit.
        for gen, age in (("a1d0", ORPHAN_AGE_S + 60), ("b2e0", 0.0)):
            batch = ChunkBatcher(
                OLD, chunk_tokens=800, overlap_tokens=80, model=ctx.live.tokens.current, batch_size=10
            ).next_batch()
            assert batch is not None
            path = ctx.data.docs / "v" / f"{gen}.jsonl"
            await ctx.store.append(path, batch.records, rows=batch.rows)
            stamp = time.time() - age
            os.utime(path, (stamp, stamp))
    monkeypatch.undo()
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        window = await docs.window("v", budget_tokens=100_000)
        assert "".join(chunk.text for chunk in window.chunks) == NEW
        names = sorted(path.name for path in (ctx.data.docs / "v").glob("*.jsonl"))
        current = ctx.documents._repo.entry("v").gen
        assert names == sorted([f"{current}.jsonl", "b2e0.jsonl"])
        assert (ctx.data.lost_found / "docs" / "v" / "a1d0.jsonl").exists()  # set aside, not deleted
        rows = await ctx.store.search("chunks", ["aardvark3"], journals=None, limit=50)
        assert {hit.journal for hit in rows} == {"docs/v/b2e0.jsonl"}  # only the young orphan's rows
        assert (await docs.search("aardvark3")).hits == ()  # and search never shows them


async def _no_removal(self: Repository, obsolete: list[tuple[str, str]]) -> None:
    """Stands in for Repository._remove: the process "dies" before removing anything."""


async def test_two_processes_share_documents_and_cursors(tmp_path: Path) -> None:
    """Two instances on one data dir see each other's ingests, replacements, cursors and forgets."""
    async with opened(tmp_path) as first, opened(tmp_path) as second:
        await first.documents.ingest(text=OLD, doc_id="v")
        assert [info.doc_id for info in await second.documents.list_documents()] == ["v"]
        assert (await second.documents.search("aardvark3")).hits
        await first.sessions.open("s")
        read = await first.documents.window("v", budget_tokens=500, session_id="s")
        follow = await second.documents.window("v", budget_tokens=500, session_id="s")
        assert follow.chunks[0].index == read.next_index
        await second.documents.ingest(text=NEW, doc_id="v")
        window = await first.documents.window("v", budget_tokens=100_000, session_id="s")
        assert window.chunks[0].index == 0  # a new version starts every cursor over
        assert "".join(chunk.text for chunk in window.chunks) == NEW
        await first.documents.forget("v")
        with pytest.raises(NotFoundError):
            await second.documents.window("v")
        assert (await second.documents.search("zebra3")).hits == ()


async def test_concurrent_reingests_of_one_id_keep_one_generation(tmp_path: Path) -> None:
    """Several re-ingests of one doc_id at once end with exactly one current, complete generation."""
    async with opened(tmp_path) as ctx:

        async def ingest(text: str) -> None:
            await ctx.documents.ingest(text=text, doc_id="v")

        async with trio.open_nursery() as nursery:
            for text in (OLD, NEW, OLD, NEW):
                nursery.start_soon(ingest, text)
        window = await ctx.documents.window("v", budget_tokens=100_000)
        assert "".join(chunk.text for chunk in window.chunks) in (OLD, NEW)
        assert len(list((ctx.data.docs / "v").glob("*.jsonl"))) == 1


async def test_crash_after_forget_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forget whose files were not yet removed when the process died is finished by the next start."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text=OLD, doc_id="v")
        await ctx.sessions.open("s")
        await ctx.documents.window("v", budget_tokens=200, session_id="s")
        monkeypatch.setattr(Repository, "_remove", _no_removal)
        await ctx.documents.forget("v")
        assert len(list((ctx.data.docs / "v").glob("*.jsonl"))) == 1
    monkeypatch.undo()
    async with opened(tmp_path) as ctx:
        assert await ctx.documents.list_documents() == []
        assert list((ctx.data.docs / "v").glob("*.jsonl")) == []
        assert await ctx.store.search("chunks", ["aardvark3"], journals=None, limit=5) == []
        await ctx.documents.ingest(text=NEW, doc_id="v")
        assert (await ctx.documents.window("v", budget_tokens=200, session_id="s")).chunks[0].index == 0


async def test_own_catalog_lines_are_absorbed_without_reading_them_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ingest's commit and a window's cursor move apply their own catalog lines; an unchanged catalog is not read at all."""
    async with opened(tmp_path) as ctx:
        docs = ctx.documents
        await docs.ingest(text=OLD, doc_id="a")
        await ctx.sessions.open("s")
        repo: Repository = docs._repo
        store = repo.store
        real_read = store.read
        reads: list[int] = []

        async def counted(path: Path, start: int = 0) -> ReadResult:
            if path == repo.catalog_path:
                reads.append(start)
            return await real_read(path, start)

        monkeypatch.setattr(store, "read", counted)
        await docs.ingest(text=NEW, doc_id="b")
        assert reads == []
        await docs.window("b", session_id="s")
        assert reads == []
        assert repo.state.offset == repo.catalog_path.stat().st_size
        assert set(repo.state.docs) == {"a", "b"} and repo.state.position("b", "s") > (0, 0)


async def test_a_small_document_costs_one_writer_batch_and_no_worker_thread_for_its_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text under INLINE_CHUNK_CHARS is chunked on the event loop, and its chunks and commit
    go to the writer as one operation (one batch); a longer one still chunks in a worker thread."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text="warm up", doc_id="w")
        thread_calls: list[str] = []
        real_run_sync = trio.to_thread.run_sync

        async def spying_run_sync(fn: Callable[..., T], *args: object, **kwargs: Any) -> T:
            thread_calls.append(getattr(fn, "__qualname__", repr(fn)))
            return await real_run_sync(fn, *args, **kwargs)

        monkeypatch.setattr(trio.to_thread, "run_sync", spying_run_sync)
        before = ctx.store.stats.batches
        await ctx.documents.ingest(text="A small note about the aardvark.\n" * 10, doc_id="small")
        assert ctx.store.stats.batches - before == 1
        assert "ChunkBatcher.next_batch" not in thread_calls
        await ctx.documents.ingest(text="Paragraph on the zebra.\n\n" * 200, doc_id="larger")
        assert "ChunkBatcher.next_batch" in thread_calls
        assert ctx.store.stats.batches - before == 2
        assert [hit.doc_id for hit in (await ctx.documents.search("aardvark")).hits] == ["small"]


class _Steps(trio.abc.Instrument):
    """Counts the steps of one task: each is a return from a schedule point."""

    def __init__(self, task: trio.lowlevel.Task) -> None:
        self.task = task
        self.steps = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task:
            self.steps += 1


async def test_a_small_ingest_yields_only_for_the_store(tmp_path: Path) -> None:
    """A small document's ingest gives the event loop one turn: its wait for the store writer
    (the free locks and limiter on its way are taken without the schedule point of trio's
    acquire, and an unchanged catalog is refreshed without one)."""
    async with opened(tmp_path) as ctx:
        await ctx.documents.ingest(text="warm up", doc_id="w")
        steps = _Steps(trio.lowlevel.current_task())
        trio.lowlevel.add_instrument(steps)
        try:
            await ctx.documents.ingest(text="A small note about the aardvark.", doc_id="small")
        finally:
            trio.lowlevel.remove_instrument(steps)
        assert steps.steps == 1
        assert [hit.doc_id for hit in (await ctx.documents.search("aardvark")).hits] == ["small"]
