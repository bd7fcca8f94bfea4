"""A document's commit waits for the store writer at most COMMIT_DEADLINE_S, and a late commit still lands.

The stalled writer is modelled by the real :class:`StoreHandle` over a channel the writer
does not read yet: the real writer serves one batch at a time and queues what comes
meanwhile in its bounded channel (store/handle.py: "Every write is an operation queued
on one bounded memory channel ... a call returns once its operation is durable"), so a
writer stuck in a batch's fsync leaves the next operations exactly there.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING

import pytest
import trio
import trio.testing

from ctxtrio.docs.chunks import chunk_rows
from ctxtrio.docs.ingest import Source, write_generation
from ctxtrio.docs.model import DocumentInfo
from ctxtrio.docs.repository import COMMIT_DEADLINE_S, CommitTimeoutError, Repository
from ctxtrio.store.handle import StoreHandle, open_store_channel
from ctxtrio.store.layout import prepare_data_dir
from ctxtrio.store.ops import AppendOp, StoreOp
from ctxtrio.store.writer import run_store_writer
from ctxtrio.text.tokens import TokenModel

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

TEXT = "# Log\n\n" + "\n\n".join(f"Step {n} wrote block {n * 7} to disk." for n in range(400))


@asynccontextmanager
async def stalled_store(
    root: Path,
) -> AsyncIterator[tuple[StoreHandle, StoreHandle, trio.MemoryReceiveChannel[StoreOp]]]:
    """(the real writer's handle, a handle whose operations wait unserved, the channel they wait in)."""
    data = prepare_data_dir(root)
    async with trio.open_nursery() as nursery:
        real: StoreHandle = await nursery.start(
            partial(run_store_writer, data, lock_timeout_s=5.0, rows_for=chunk_rows)
        )
        send, queued = open_store_channel()
        stalled = StoreHandle(data, real._index, send, real.stats, real.health)
        yield real, stalled, queued
        await real.aclose()


async def test_commit_gives_up_at_the_deadline_and_the_queued_commit_lands_later(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """A commit the writer does not serve raises CommitTimeoutError after exactly COMMIT_DEADLINE_S; it stays queued."""
    async with stalled_store(tmp_path / "data") as (real, stalled, queued):
        repo = Repository(stalled)
        info = DocumentInfo("d", "t", "inline", 1, 10, 3, 0.0)
        started = trio.current_time()
        with pytest.raises(CommitTimeoutError, match=r"commit of document 'd' within 120 s"):
            await repo.commit(info, "0123456789abcdef")  # (result, end)
        assert trio.current_time() - started == pytest.approx(COMMIT_DEADLINE_S, abs=1e-6)
        op = queued.receive_nowait()  # still there: the writer, unstuck, would write it
        assert isinstance(op, AppendOp)
        await real.append(op.path, op.records)
        reader = Repository(real)
        await reader.refresh()
        assert reader.state.docs["d"].gen == "0123456789abcdef"


async def test_ingest_keeps_its_generation_when_the_commit_times_out(
    tmp_path: Path, clock: trio.testing.MockClock
) -> None:
    """A timed-out commit leaves the new chunks alone (no removal queued), so the commit landing later
    points at a whole document (the last chunks travel with the commit, written before it)."""
    async with stalled_store(tmp_path / "data") as (real, stalled, queued), trio.open_nursery() as nursery:
        repo = Repository(stalled)
        held: list[AppendOp] = []
        relayed: list[str] = []

        async def relay() -> None:
            """Hands every operation to the real writer but the one carrying the commit (the stalled file)."""
            async for op in queued:
                carried = op.then if isinstance(op, AppendOp) and op.then is not None else op
                if (
                    isinstance(op, AppendOp)
                    and isinstance(carried, AppendOp)
                    and carried.path == repo.catalog_path
                    and carried.records
                    and carried.records[0].kind == "commit"
                ):
                    held.append(op)
                else:
                    relayed.append(op.kind)
                    await real._send.send(op)  # the very op: the writer sets its result and acks it

        nursery.start_soon(relay)
        with pytest.raises(CommitTimeoutError):
            await write_generation(
                repo, Source("d", "log", "inline", TEXT), chunk_tokens=200, overlap_tokens=0, model=TokenModel.flat()
            )
        assert len(held) == 1 and "remove" not in relayed
        await real._send.send(held[0])  # the writer, unstuck, serves it
        await held[0].outcome.done.wait()
        generations = list((repo.data.docs / "d").glob("*.jsonl"))
        assert len(generations) == 1
        reader = Repository(real)
        await reader.refresh()
        entry, doc = await reader.load("d")
        assert reader.gen_path("d", entry.gen) == generations[0]
        assert "".join(chunk.text for chunk in doc.chunks).count("Step ") == 400
        nursery.cancel_scope.cancel()
