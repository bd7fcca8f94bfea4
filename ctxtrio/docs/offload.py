"""Chunking a large document in a child process (:mod:`._chunk_worker`), batch by batch.

A thread would share the GIL with the event loop: while it chunks megabytes, every
tool call waits for the GIL at each step (up to the switch interval, 5 ms, each time)
and the garbage collector walks the chunker's objects. A child process does the CPU
work on another core; the server only slices its own copy of the text, builds the
records and appends them.

The child is owned by the calling task: it runs under ``trio.run_process`` in a
nursery, so cancelling the ingest kills it, and a non-zero exit raises.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import trio

from ..store.index import IndexRow
from ..store.records import NewRecord
from ..text.tokens import TokenModel
from ._chunk_worker import FRAME_HEADER, PreparedChunk
from .chunks import Batch, StoredChunk, chunk_record

__all__ = ["OFFLOAD_MIN_CHARS", "produce_in_child"]

#: Documents at least this long are chunked in a child process (its start costs ~0.1 s).
OFFLOAD_MIN_CHARS = 2_000_000
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


async def produce_in_child(
    text: str,
    send: trio.MemorySendChannel[Batch],
    *,
    chunk_tokens: int,
    overlap_tokens: int,
    model: TokenModel,
    batch_size: int,
) -> None:
    """Send the batches of ``text`` to ``send`` (closed at the end), chunked by a child process."""
    payload = await trio.to_thread.run_sync(partial(text.encode, "utf-8", "surrogatepass"))
    header = {
        "bytes": len(payload),
        "chunk_tokens": chunk_tokens,
        "overlap_tokens": overlap_tokens,
        "rates": {cls.value: rate for cls, rate in model.rates.items()},
        "batch": batch_size,
    }
    command = [sys.executable, "-m", "ctxtrio.docs._chunk_worker"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_PACKAGE_PARENT, os.environ.get("PYTHONPATH")]))}
    async with send, trio.open_nursery() as nursery:
        run = partial(trio.run_process, command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        process: trio.Process = await nursery.start(run)
        assert process.stdin is not None and process.stdout is not None
        nursery.start_soon(_feed, process.stdin, json.dumps(header).encode() + b"\n", payload)
        async for frame in _frames(process.stdout):
            batch = await trio.to_thread.run_sync(_batch, text, frame)
            await send.send(batch)


async def _feed(stdin: trio.abc.SendStream, header: bytes, payload: bytes) -> None:
    async with stdin:
        await stdin.send_all(header)
        view = memoryview(payload)
        for start in range(0, len(view), 1 << 20):
            await stdin.send_all(view[start : start + (1 << 20)])


async def _frames(stdout: trio.abc.ReceiveStream) -> AsyncIterator[bytes]:
    buffer = bytearray()
    while True:
        while len(buffer) >= FRAME_HEADER.size:
            (size,) = FRAME_HEADER.unpack_from(buffer)
            if size == 0:
                return
            if len(buffer) < FRAME_HEADER.size + size:
                break
            frame = bytes(buffer[FRAME_HEADER.size : FRAME_HEADER.size + size])
            del buffer[: FRAME_HEADER.size + size]
            yield frame
        data = await stdout.receive_some(1 << 20)
        if not data:
            raise RuntimeError("the chunking process stopped without finishing; see the server log")
        buffer += data


def _batch(text: str, frame: bytes) -> Batch:
    """A Batch from one frame: chunk texts sliced from the server's copy of ``text``."""
    prepared: list[PreparedChunk] = marshal.loads(frame)
    chunks: list[StoredChunk] = []
    records: list[NewRecord] = []
    rows: list[list[IndexRow]] = []
    for index, start, end, trail, tokens, terms in prepared:
        chunk = StoredChunk(index, text[start:end], start, end, tuple(trail), tokens)
        chunks.append(chunk)
        records.append(chunk_record(chunk))
        rows.append([IndexRow("chunks", str(index), terms)])
    return Batch(chunks, records, rows, chunks[-1].end)

