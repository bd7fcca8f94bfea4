"""Chunking in a child process (:mod:`._chunk_worker`), batch by batch.

A thread would share the GIL with the event loop: while it chunks megabytes, every
tool call waits for the GIL at each step (up to the switch interval, 5 ms, each time)
and the garbage collector walks the chunker's objects. A child process does the CPU
work on another core; the server only slices its own copy of the text, builds the
records and appends them.

:func:`produce_in_child` runs one child for one (large) document, owned by the
calling task: it runs under ``trio.run_process`` in a nursery, so cancelling the
ingest kills it; a child that stops before the end of the document raises.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from .._errors import StoreError
from .._nursery import open_nursery
from ..store.rows import IndexRow
from ..text.kinds import Kind
from ..text.terms import ascii_index_text
from ._chunk_worker import FRAME_HEADER, PreparedChunk
from .chunks import Batch, StoredChunk, chunk_record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..store.records import NewRecord
    from ..text.tokens import TokenModel

__all__ = [
    "OFFLOAD_MIN_CHARS",
    "FrameReader",
    "batch_from_frame",
    "job_header",
    "produce_in_child",
    "run_worker",
    "send_job",
]

#: Documents at least this long get a child process of their own (its start costs ~0.1 s).
OFFLOAD_MIN_CHARS = 2_000_000
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
_PIPE_CHUNK = 1 << 20


async def run_worker(*, task_status: trio.TaskStatus[trio.Process] = trio.TASK_STATUS_IGNORED) -> None:
    """Run the chunking child (for ``nursery.start``, which returns the Process).

    A non-zero exit is not raised here: the reader notices the missing end frame. The
    child runs in the folder that holds this ``ctxtrio`` (``-m`` puts its working
    folder first on ``sys.path``): a server started inside another checkout must not
    run that checkout's worker, whose frames may not match. It runs in a process group of
    its own, so Ctrl-C at a terminal (SIGINT to the foreground group) reaches only the
    parent, which owns cancellation and ends the child; the child also ends at stdin EOF.
    """
    command: Sequence[str] = [sys.executable, "-m", "ctxtrio.docs._chunk_worker"]
    path = os.pathsep.join(filter(None, [_PACKAGE_PARENT, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    await trio.run_process(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=_PACKAGE_PARENT,
        check=False,
        process_group=0,
        task_status=task_status,
    )


def job_header(
    payload: bytes,
    *,
    chunk_tokens: int,
    overlap_tokens: int,
    model: TokenModel,
    batch_size: int,
    kind: Kind = Kind.MARKDOWN,
) -> bytes:
    """The JSON line that starts a job of ``len(payload)`` bytes of a text of ``kind``."""
    header = {
        "bytes": len(payload),
        "chunk_tokens": chunk_tokens,
        "overlap_tokens": overlap_tokens,
        "rates": {cls.value: rate for cls, rate in model.rates.items()},
        "batch": batch_size,
        "kind": kind.value,
    }
    return json.dumps(header).encode() + b"\n"


async def send_job(stdin: trio.abc.SendStream, header: bytes, payload: bytes) -> None:
    """Write one job to the child, in pieces of at most 1 MiB."""
    await stdin.send_all(header)
    view = memoryview(payload)
    for start in range(0, len(view), _PIPE_CHUNK):
        await stdin.send_all(view[start : start + _PIPE_CHUNK])


class FrameReader:
    """Frames from the child's stdout; keeps what it read past a frame for the next one."""

    def __init__(self, stdout: trio.abc.ReceiveStream) -> None:
        self._stdout = stdout
        self._buffer = bytearray()

    async def next(self) -> bytes | None:
        """The next frame's payload, or None at the end of a job. StoreError if the child is gone."""
        size = FRAME_HEADER.size
        while True:
            if len(self._buffer) >= size:
                (length,) = FRAME_HEADER.unpack_from(self._buffer)
                if len(self._buffer) >= size + length:
                    frame = bytes(self._buffer[size : size + length])
                    del self._buffer[: size + length]
                    return frame if length else None
            data = await self._stdout.receive_some(_PIPE_CHUNK)
            if not data:
                raise StoreError("the chunking process stopped in the middle of a document; see the server log")
            self._buffer += data


def batch_from_frame(text: str, frame: bytes) -> Batch:
    """A Batch from one frame: chunk texts sliced from the server's copy of ``text``."""
    prepared: list[PreparedChunk] = marshal.loads(frame)
    chunks: list[StoredChunk] = []
    records: list[NewRecord] = []
    rows: list[list[IndexRow]] = []
    for index, start, end, trail, tokens, whole, terms, encoded, heading in prepared:
        piece = text[start:end]
        if whole:
            terms = ascii_index_text(piece, terms)
        chunk = StoredChunk(index, piece, start, end, tuple(trail), tokens)
        chunks.append(chunk)
        records.append(chunk_record(chunk, encoded=encoded or b""))
        rows.append([IndexRow("chunks", str(index), terms, heading)])
    return Batch(chunks, records, rows, chunks[-1].end)


async def produce_in_child(
    text: str,
    send: trio.MemorySendChannel[Batch],
    *,
    chunk_tokens: int,
    overlap_tokens: int,
    model: TokenModel,
    batch_size: int,
    kind: Kind = Kind.MARKDOWN,
) -> None:
    """Send the batches of ``text`` to ``send`` (closed at the end), chunked by a child of its own."""
    payload = await trio.to_thread.run_sync(partial(text.encode, "utf-8", "surrogatepass"))
    header = job_header(
        payload, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens, model=model, batch_size=batch_size, kind=kind
    )
    async with send, open_nursery() as nursery:
        process: trio.Process = await nursery.start(run_worker)
        assert process.stdin is not None and process.stdout is not None
        stdin = process.stdin

        async def feed() -> None:
            async with stdin:
                await send_job(stdin, header, payload)

        nursery.start_soon(feed)
        reader = FrameReader(process.stdout)
        while (frame := await reader.next()) is not None:
            await send.send(await trio.to_thread.run_sync(batch_from_frame, text, frame))
