"""A pool of chunking child processes (:mod:`._chunk_worker`), reused across ingests.

Chunking and index text are pure CPU work. In a thread they would hold the GIL
against the event loop (every tool call waits up to a switch interval at each step)
and use one core however many ingests run. In the pool they run in up to ``size``
child processes (one per core by default), so concurrent ingests use every core and
the server's event loop only moves bytes.

Workers start on first use, not with the server (most sessions never ingest, and
reading documents needs none), and stay for later ingests. The first ingest whose text
is long enough for the pool calls :meth:`ChunkPool.warm`, which starts the remaining
workers in the background, so concurrent and later ingests find them ready. Each runs
under ``trio.run_process`` in the nursery given to the pool (the context's background
nursery): cancelling that nursery kills them. A job
that fails or is cancelled half-way kills its worker (its output would be
out of step); a later job starts a fresh one. A worker that dies mid-job makes that
ingest fail with :class:`~ctxtrio._errors.StoreError`; its uncommitted generation is
removed by the caller as for any failed ingest.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import trio

from .._errors import StoreError
from ..text.kinds import Kind
from .offload import FrameReader, batch_from_frame, job_header, run_worker, send_job

if TYPE_CHECKING:
    from ..text.tokens import TokenModel
    from .chunks import Batch

__all__ = ["POOL_ALONE_MIN_CHARS", "POOL_MIN_CHARS", "ChunkPool"]

#: Texts at least this long go to the pool; shorter ones cost less in a thread than
#: the round trip through a pipe (the stdlib sources, 1,758 files ingested one at a
#: time: 0.79 CPU-s/MB with 16,000, 0.69 with 64,000, stress/ingest_cpu.py, load ~11).
POOL_MIN_CHARS = 64_000
#: Texts shorter than this go to the pool only while another ingest is in flight. An
#: ingest alone has no other work to keep off the GIL, and a job's pipe round trips, frames
#: and start cost more than a thread does (the stdlib's 118 files of 64,000-755,864
#: characters, one at a time: 2.14 / 2.42 CPU-s in a thread, plus ~0.13 of record
#: encoding, against 2.80 / 2.97 in the pool, parent and child; load 7.4). Without a
#: pool the server chunks up to :data:`~.offload.OFFLOAD_MIN_CHARS` in threads anyway.
POOL_ALONE_MIN_CHARS = 1_000_000
#: Frames smaller than this are turned into records on the event loop (well under a millisecond).
_INLINE_FRAME_BYTES = 256_000


@dataclass(eq=False, slots=True)
class _Worker:
    process: trio.Process
    reader: FrameReader


class ChunkPool:
    """Up to ``size`` chunking processes, started on demand in ``nursery``."""

    def __init__(self, nursery: trio.Nursery, *, size: int | None = None) -> None:
        self._nursery = nursery
        self.size = size if size is not None else max(1, os.cpu_count() or 1)
        self._slots = trio.CapacityLimiter(self.size)
        self._idle: list[_Worker] = []
        self._returned = trio.lowlevel.ParkingLot()
        #: Workers alive or starting; never more than ``size``.
        self._alive = 0
        self._warming = False
        #: Workers started so far (for tests and status).
        self.started = 0

    def warm(self) -> None:
        """Start the missing workers in the background (once; later calls do nothing)."""
        if not self._warming:
            self._warming = True
            for _ in range(self.size - self._alive):
                self._nursery.start_soon(self._add_idle)

    async def _add_idle(self) -> None:
        if self._alive < self.size:
            self._keep(await self._start())

    def _keep(self, worker: _Worker) -> None:
        self._idle.append(worker)
        self._returned.unpark()

    def _kill(self, worker: _Worker) -> None:
        worker.process.kill()  # its task in the nursery reaps it
        self._alive -= 1
        self._returned.unpark()  # a waiter may start a fresh one

    async def _take(self) -> _Worker:
        """An idle worker; a new one if fewer than ``size`` exist; else wait for one."""
        while True:
            while self._idle:
                worker = self._idle.pop()
                if worker.process.returncode is None:
                    return worker
                self._alive -= 1  # died while idle (killed from outside): start another
            if self._alive < self.size:
                return await self._start()
            await self._returned.park()

    async def produce(
        self,
        text: str,
        send: trio.MemorySendChannel[Batch],
        *,
        chunk_tokens: int,
        overlap_tokens: int,
        model: TokenModel,
        batch_size: int,
        kind: Kind = Kind.MARKDOWN,
    ) -> None:
        """Send the batches of ``text`` to ``send`` (closed at the end), chunked by a pooled worker.

        Waits for a free worker when all ``size`` are busy.
        """
        if len(text) >= _INLINE_FRAME_BYTES:
            payload = await trio.to_thread.run_sync(partial(text.encode, "utf-8", "surrogatepass"))
        else:
            payload = text.encode("utf-8", "surrogatepass")
        header = job_header(
            payload,
            chunk_tokens=chunk_tokens,
            overlap_tokens=overlap_tokens,
            model=model,
            batch_size=batch_size,
            kind=kind,
        )
        async with send, self._slots:
            worker = await self._take()
            finished = sending = False
            try:
                assert worker.process.stdin is not None
                await send_job(worker.process.stdin, header, payload)
                while (frame := await worker.reader.next()) is not None:
                    if len(frame) < _INLINE_FRAME_BYTES:
                        batch = batch_from_frame(text, frame)
                    else:
                        batch = await trio.to_thread.run_sync(batch_from_frame, text, frame)
                    sending = True
                    await send.send(batch)  # BrokenResourceError: the ingest stopped reading
                    sending = False
                finished = True
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                if sending:
                    raise
                raise StoreError(f"the chunking process is gone ({exc}); see the server log") from exc
            finally:
                if finished:
                    self._keep(worker)
                else:
                    self._kill(worker)  # out of step with its protocol

    async def _start(self) -> _Worker:
        self._alive += 1
        try:
            process: trio.Process = await self._nursery.start(run_worker)
        except BaseException:
            self._alive -= 1
            raise
        assert process.stdout is not None
        self.started += 1
        return _Worker(process, FrameReader(process.stdout))
