"""The pool of chunking processes: reused across ingests, replaced when one dies."""

from __future__ import annotations

import json.decoder
import signal
from functools import partial
from pathlib import Path

import pytest
import trio
import trio.testing

from ctxtrio._errors import StoreError
from ctxtrio.docs.pool import POOL_MIN_CHARS, ChunkPool
from ctxtrio.docs.service import DocumentService
from ctxtrio.text.chunking import chunk_document
from ctxtrio.text.kinds import Kind

from .conftest import fixture_text, opened


def _long_text(number: int) -> str:
    text = f"# Document {number}\n\n" + fixture_text("manual.md")
    while len(text) < POOL_MIN_CHARS:
        text += "\n\n" + fixture_text("manual.md")
    return text


async def test_pooled_ingests_match_the_chunker_and_reuse_workers(tmp_path: Path) -> None:
    """Concurrent long ingests are chunked by at most size workers, exactly as the chunker says."""
    async with opened(tmp_path) as ctx, trio.open_nursery() as nursery:
        pool = ChunkPool(nursery, size=2)
        docs = DocumentService(ctx.store, ctx.live, ctx.config, pool=pool, alone_min_chars=POOL_MIN_CHARS)
        texts = [_long_text(number) for number in range(5)]
        async with trio.open_nursery() as ingests:
            for number, text in enumerate(texts):
                ingests.start_soon(partial(docs.ingest, text=text, doc_id=f"p{number}"))
        assert pool.started == 2
        model = ctx.live.tokens.current
        for number, text in enumerate(texts):
            _, loaded = await docs._repo.load(f"p{number}")
            assert loaded.chunks == chunk_document(text, chunk_tokens=800, overlap_tokens=80, model=model)
        assert [hit.doc_id for hit in (await docs.search("Document 3")).hits][:1] == ["p3"]
        nursery.cancel_scope.cancel()


async def test_a_worker_killed_mid_job_fails_that_ingest_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that dies mid-document fails that ingest cleanly; the next ingest gets a fresh worker."""
    async with opened(tmp_path) as ctx, trio.open_nursery() as nursery:
        pool = ChunkPool(nursery, size=1)
        pool._warming = True  # workers start only for jobs here, so each start is counted
        docs = DocumentService(ctx.store, ctx.live, ctx.config, pool=pool, alone_min_chars=POOL_MIN_CHARS)
        real_start = pool._start

        async def start_and_kill() -> object:
            worker = await real_start()
            worker.process.send_signal(signal.SIGKILL)
            return worker

        monkeypatch.setattr(pool, "_start", start_and_kill)
        with pytest.raises(StoreError, match="chunking process"):
            await docs.ingest(text=_long_text(0), doc_id="dead")
        assert list((ctx.data.docs / "dead").glob("*.jsonl")) == []
        monkeypatch.setattr(pool, "_start", real_start)
        result = await docs.ingest(text=_long_text(1), doc_id="alive")
        assert result.doc.chunks > 0 and pool.started == 2
        nursery.cancel_scope.cancel()


async def test_reads_and_short_ingests_start_no_worker_and_a_long_ingest_starts_them_all(tmp_path: Path) -> None:
    """Listing, searching, reading and short ingests start no chunking process; the first long ingest starts all."""
    async with opened(tmp_path) as ctx, trio.open_nursery() as nursery:
        pool = ChunkPool(nursery, size=2)
        docs = DocumentService(ctx.store, ctx.live, ctx.config, pool=pool, alone_min_chars=POOL_MIN_CHARS)
        assert await docs.list_documents() == []
        await docs.ingest(text="# Short\n\nA short note about otters.", doc_id="s")
        assert (await docs.search("otters")).hits and (await docs.window("s")).chunks
        await docs.outline("s")
        await trio.testing.wait_all_tasks_blocked()
        assert pool.started == 0 and not pool._warming
        await docs.ingest(text=_long_text(0), doc_id="w")
        with trio.fail_after(30):
            while len(pool._idle) < 2:
                await trio.sleep(0.01)
        await docs.ingest(text=_long_text(1), doc_id="w2")
        assert pool.started == 2 and len(pool._idle) == 2
        nursery.cancel_scope.cancel()


async def test_a_worker_that_died_while_idle_is_replaced(tmp_path: Path) -> None:
    """An idle worker killed from outside is noticed before use: the next ingest succeeds on a new one."""
    async with opened(tmp_path) as ctx, trio.open_nursery() as nursery:
        pool = ChunkPool(nursery, size=1)
        docs = DocumentService(ctx.store, ctx.live, ctx.config, pool=pool, alone_min_chars=POOL_MIN_CHARS)
        await docs.ingest(text=_long_text(0), doc_id="first")
        (idle,) = pool._idle
        idle.process.send_signal(signal.SIGKILL)
        with trio.fail_after(10):
            await idle.process.wait()
        result = await docs.ingest(text=_long_text(1), doc_id="second")
        assert result.doc.chunks > 0 and pool.started == 2
        nursery.cancel_scope.cancel()


async def test_workers_run_the_servers_own_package_whatever_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server whose working folder holds another ctxtrio still gets its own chunking workers."""
    other = tmp_path / "other-checkout" / "ctxtrio" / "docs"
    other.mkdir(parents=True)
    for folder in (other.parent, other):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (other / "_chunk_worker.py").write_text("raise SystemExit(3)\n", encoding="utf-8")
    monkeypatch.chdir(other.parent.parent)
    async with opened(tmp_path) as ctx, trio.open_nursery() as nursery:
        docs = DocumentService(ctx.store, ctx.live, ctx.config, pool=ChunkPool(nursery, size=1))
        result = await docs.ingest(text=_long_text(0), doc_id="own")
        assert result.doc.chunks > 1
        nursery.cancel_scope.cancel()


async def test_pooled_code_is_split_by_its_kind(tmp_path: Path) -> None:
    """A long Python file titled ``*.py`` is chunked in a worker exactly as the chunker reads Python."""
    text = Path(json.decoder.__file__).read_text(encoding="utf-8")
    while len(text) < POOL_MIN_CHARS:
        text += "\n\n" + text
    async with opened(tmp_path) as ctx, trio.open_nursery() as nursery:
        pool = ChunkPool(nursery, size=1)
        docs = DocumentService(ctx.store, ctx.live, ctx.config, pool=pool, alone_min_chars=POOL_MIN_CHARS)
        await docs.ingest(text=text, title="decoder.py", doc_id="code")
        assert pool.started == 1
        _, loaded = await docs._repo.load("code")
        model = ctx.live.tokens.current
        assert loaded.chunks == chunk_document(text, chunk_tokens=800, overlap_tokens=80, model=model, kind=Kind.PYTHON)
        assert ("def py_scanstring",) in {chunk.trail for chunk in loaded.chunks}
        nursery.cancel_scope.cancel()


async def test_an_ingest_alone_chunks_in_a_thread_and_one_beside_another_in_the_pool(tmp_path: Path) -> None:
    """A long text ingested while no other ingest is in flight starts no worker; beside another, it goes to the pool."""
    async with opened(tmp_path) as ctx, trio.open_nursery() as nursery:
        pool = ChunkPool(nursery, size=1)
        docs = DocumentService(ctx.store, ctx.live, ctx.config, pool=pool)
        text = _long_text(0)
        await docs.ingest(text=text, doc_id="alone")
        await trio.testing.wait_all_tasks_blocked()
        assert pool.started == 0 and not pool._warming
        _, loaded = await docs._repo.load("alone")
        model = ctx.live.tokens.current
        assert loaded.chunks == chunk_document(text, chunk_tokens=800, overlap_tokens=80, model=model)
        release = trio.Event()

        async def held(done: float, total: float) -> None:
            await release.wait()  # the short ingest holds its characters until released

        async with trio.open_nursery() as ingests:
            ingests.start_soon(partial(docs.ingest, text="# Short\n\nA note.", doc_id="short", progress=held))
            await trio.testing.wait_all_tasks_blocked()
            await docs.ingest(text=_long_text(1), doc_id="beside")
            release.set()
        assert pool.started == 1
        _, loaded = await docs._repo.load("beside")
        assert loaded.chunks == chunk_document(_long_text(1), chunk_tokens=800, overlap_tokens=80, model=model)
        nursery.cancel_scope.cancel()
