"""A separate OS process that appends to a shared journal through its own store writer.

Run as ``python -m tests.store.append_worker DATA_DIR SESSION NAME COUNT CONCURRENCY``;
prints nothing; exits 0 when every append was acknowledged.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from ctxtrio.store.layout import prepare_data_dir
from ctxtrio.store.records import NewRecord
from ctxtrio.store.writer import run_store_writer

if TYPE_CHECKING:
    from ctxtrio.store.handle import StoreHandle


async def main(data_dir: Path, session: str, name: str, count: int, concurrency: int) -> None:
    data = prepare_data_dir(data_dir)
    path = data.session_journal(session)
    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(partial(run_store_writer, data, lock_timeout_s=30.0))

        async def appender(lane: int) -> None:
            for number in range(lane, count, concurrency):
                await store.append(path, [NewRecord("entry", {"text": f"{name}:{number}"}, id_prefix="e")])

        async with trio.open_nursery() as producers:
            for lane in range(concurrency):
                producers.start_soon(appender, lane)
        await store.aclose()


if __name__ == "__main__":
    directory, session, name, count, concurrency = sys.argv[1:6]
    trio.run(main, Path(directory), session, name, int(count), int(concurrency))
