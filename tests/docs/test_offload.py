"""Large documents are chunked in a child process, with the same result as in a thread."""

from __future__ import annotations

import io
import json
import marshal
import sys
from typing import TYPE_CHECKING

import trio

from ctxtrio.docs._chunk_worker import FRAME_HEADER, main
from ctxtrio.docs.chunks import chunk_record
from ctxtrio.docs.offload import batch_from_frame
from ctxtrio.docs.service import DocumentService
from ctxtrio.store.records import encode_record
from ctxtrio.text.chunking import chunk_document
from ctxtrio.text.terms import index_text
from ctxtrio.text.tokens import TokenModel
from testkit.processes import run_reader_gone

from .conftest import fixture_text, opened

if TYPE_CHECKING:
    from pathlib import Path

MODEL = TokenModel.cold()


def test_worker_protocol_round_trip() -> None:
    """The worker's frames decode to chunk_document's chunks and their index_text (ASCII and not), then an end frame."""
    text = fixture_text("manual.md") + "\n\n" + fixture_text("korean.txt") + "\ud800 lone surrogate"
    payload = text.encode("utf-8", "surrogatepass")
    rates = {cls.value: rate for cls, rate in MODEL.rates.items()}
    header = {"bytes": len(payload), "chunk_tokens": 300, "overlap_tokens": 30, "batch": 7, "rates": rates}
    out = io.BytesIO()
    assert main(io.BytesIO(json.dumps(header).encode() + b"\n" + payload), out) == 0
    data = out.getvalue()
    frames: list[bytes] = []
    position = 0
    while True:
        (size,) = FRAME_HEADER.unpack_from(data, position)
        position += FRAME_HEADER.size
        if size == 0:
            break
        frames.append(data[position : position + size])
        position += size
    assert position == len(data)
    expected = chunk_document(text, chunk_tokens=300, overlap_tokens=30, model=MODEL)
    assert all(len(marshal.loads(frame)) <= 7 for frame in frames)
    batches = [batch_from_frame(text, frame) for frame in frames]
    assert [chunk for batch in batches for chunk in batch.chunks] == expected
    rows = [row for batch in batches for rows in batch.rows for row in rows]
    assert [(row.item, row.terms) for row in rows] == [(str(c.index), index_text(c.text)) for c in expected]
    assert any(not c.text.isascii() for c in expected) and any(c.text.isascii() for c in expected)
    records = [record for batch in batches for record in batch.records]
    encodable = [n for n, chunk in enumerate(expected) if "\ud800" not in chunk.text]
    lines = [encode_record(records[n], seq=7, ts=1.5) for n in encodable]
    assert lines == [encode_record(chunk_record(expected[n]), seq=7, ts=1.5) for n in encodable]
    # Encoded by the worker, except the chunk with a lone surrogate (the writer's error to report).
    assert [not record.encoded for record in records] == ["\ud800" in chunk.text for chunk in expected]


async def test_child_process_ingest_matches_threads(tmp_path: Path) -> None:
    """A document chunked by the child process is stored exactly as one chunked in a thread."""
    text = fixture_text("manual.md") + "\n\n" + fixture_text("chinese.txt")
    async with opened(tmp_path) as ctx:
        child = DocumentService(ctx.store, ctx.live, ctx.config, offload_min_chars=1)
        seen: list[float] = []

        async def progress(done: float, total: float) -> None:
            seen.append(done)

        await child.ingest(text=text, doc_id="child", progress=progress)
        await ctx.documents.ingest(text=text, doc_id="thread")
        _, by_child = await child._repo.load("child")
        _, by_thread = await ctx.documents._repo.load("thread")
        assert by_child.chunks == by_thread.chunks and seen[-1] == len(text)
        hits = (await ctx.documents.search("连接失败")).hits
        assert {hit.doc_id for hit in hits} == {"child", "thread"}


async def test_cancelled_child_ingest_leaves_nothing(tmp_path: Path) -> None:
    """Cancelling an ingest in the child process stops it and removes the uncommitted file."""
    text = "\n\n".join(f"Line {n} about zebra{n % 5} and other words." for n in range(30_000))
    async with opened(tmp_path) as ctx:
        child = DocumentService(ctx.store, ctx.live, ctx.config, offload_min_chars=1)
        with trio.CancelScope() as scope:

            async def cancel(done: float, total: float) -> None:
                scope.cancel()

            await child.ingest(text=text, doc_id="z", progress=cancel)
        assert scope.cancelled_caught
        assert list((ctx.data.docs / "z").glob("*.jsonl")) == []
        assert await child.list_documents() == []


def test_a_worker_whose_reader_is_gone_exits_quietly(tmp_path: Path) -> None:
    """The server killed (SIGKILL, OOM) while a child chunks: its next frame meets a closed pipe. It exits 0
    with nothing on stderr (it printed a BrokenPipeError traceback per worker into the host's log)."""
    text = ("A paragraph of words to chunk. " * 40 + "\n\n") * 400
    payload = text.encode()
    rates = {cls.value: rate for cls, rate in MODEL.rates.items()}
    header = {"bytes": len(payload), "chunk_tokens": 300, "overlap_tokens": 30, "batch": 1, "rates": rates}
    job = tmp_path / "job"
    job.write_bytes(json.dumps(header).encode() + b"\n" + payload)
    with job.open("rb") as source:
        done = run_reader_gone([sys.executable, "-m", "ctxtrio.docs._chunk_worker"], stdin=source)
    assert done.returncode == 0 and done.stderr == b"", done.stderr.decode(errors="replace")[-2000:]
