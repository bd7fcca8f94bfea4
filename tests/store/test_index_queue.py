"""The writer's index flushes: appends acknowledged during a flush are indexed together, in order."""

from __future__ import annotations

import threading
from functools import partial
from typing import TYPE_CHECKING

import trio
import trio.testing

from ctxtrio.docs.chunks import chunk_rows
from ctxtrio.store import writer as writer_module
from ctxtrio.store.index import Appended, Forget, SearchIndex
from ctxtrio.store.layout import prepare_data_dir
from ctxtrio.store.records import NewRecord
from ctxtrio.store.writer import run_store_writer

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import pytest

    from ctxtrio.store.handle import StoreHandle
    from ctxtrio.store.layout import DataDir


def _chunk(index: int, text: str) -> NewRecord:
    return NewRecord("chunk", {"index": index, "text": text})


def _hold_first_flush(monkeypatch: pytest.MonkeyPatch) -> tuple[list[list[str]], threading.Event, threading.Event]:
    """Spy on index flushes (the journals of each, in order; ``-name`` for one forgotten) and hold
    the first one in its worker thread until the returned ``hold`` is set; ``started`` is set when it begins."""
    flushes: list[list[str]] = []
    hold, started = threading.Event(), threading.Event()
    real_index_batch = SearchIndex.index_batch

    def spying_index_batch(self: SearchIndex, appended: Sequence[Appended | Forget]) -> None:
        flushes.append([f"-{item.journal}" if isinstance(item, Forget) else item[0] for item in appended])
        if len(flushes) == 1:
            started.set()
            hold.wait(10)  # the first flush is slow: the writer must not wait for it
        real_index_batch(self, appended)

    monkeypatch.setattr(SearchIndex, "index_batch", spying_index_batch)
    return flushes, hold, started


def _doc_paths(data: DataDir, count: int) -> list[Path]:
    paths = [data.docs / f"d{number}" / "g.jsonl" for number in range(count)]
    for path in paths:
        path.parent.mkdir()
    return paths


async def test_appends_acknowledged_during_a_flush_share_the_next_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one index flush is held up, later appends are acknowledged at once; the next flush
    indexes all of them in one transaction, and a search made meanwhile waits for it and finds them."""
    data = prepare_data_dir(tmp_path / "data")
    flushes, hold, first_started = _hold_first_flush(monkeypatch)
    paths = _doc_paths(data, 6)
    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(
            partial(run_store_writer, data, lock_timeout_s=5.0, rows_for=chunk_rows)
        )
        await store.append(paths[0], [_chunk(0, "zebra0 first")])
        assert await trio.to_thread.run_sync(first_started.wait, 10)  # after FLUSH_DELAY_S
        for number, path in enumerate(paths[1:], start=1):
            await store.append(path, [_chunk(0, f"zebra{number} later")])  # acknowledged though the index is held
        assert len(flushes) == 1
        found: list[str] = []
        searched = trio.Event()

        async def search() -> None:
            hits = await store.search("chunks", ["zebra5"], journals=None, limit=5)
            found.extend(hit.journal for hit in hits)
            searched.set()

        nursery.start_soon(search)
        await trio.testing.wait_all_tasks_blocked()
        assert not searched.is_set()  # the search waits for the appends acknowledged before it
        hold.set()
        with trio.fail_after(10):
            await searched.wait()
        await store.aclose()
    names = [data.journal_name(path) for path in paths]
    assert flushes == [names[:1], names[1:]]
    assert found == [names[5]]


async def test_a_removal_does_not_wait_for_the_index_and_its_rows_go_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A removal that arrives while one flush is held and appends are queued behind it is done at
    once (the file is gone); its rows are forgotten by the next flush, after those appends, and a
    search made after it waits for that and finds only the others."""
    data = prepare_data_dir(tmp_path / "data")
    flushes, hold, first_started = _hold_first_flush(monkeypatch)
    paths = _doc_paths(data, 3)
    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(
            partial(run_store_writer, data, lock_timeout_s=5.0, rows_for=chunk_rows)
        )
        await store.append(paths[0], [_chunk(0, "numbat first")])
        assert await trio.to_thread.run_sync(first_started.wait, 10)
        await store.append(paths[1], [_chunk(0, "numbat queued")])  # queued behind the held flush
        await store.append(paths[2], [_chunk(0, "numbat removed")])
        with trio.fail_after(10):
            await store.remove(paths[2])  # the held flush does not hold it up
        assert not paths[2].exists()
        assert not hold.is_set()
        hold.set()
        with trio.fail_after(10):
            hits = await store.search("chunks", ["numbat"], journals=None, limit=5)
        assert sorted(hit.journal for hit in hits) == sorted(data.journal_name(path) for path in paths[:2])
        await store.aclose()
    names = [data.journal_name(path) for path in paths]
    assert flushes == [names[:1], [names[1], names[2], f"-{names[2]}"]]


async def test_appends_in_a_row_are_indexed_together_and_a_search_does_not_wait_for_the_delay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Appends acknowledged one after another within FLUSH_DELAY_S share one flush; a search
    made right after them starts that flush at once and finds them all."""
    data = prepare_data_dir(tmp_path / "data")
    flushes, hold, _ = _hold_first_flush(monkeypatch)
    hold.set()  # spy only
    monkeypatch.setattr(writer_module, "FLUSH_DELAY_S", 3600.0)  # only a search can start the flush
    paths = _doc_paths(data, 5)
    async with trio.open_nursery() as nursery:
        store: StoreHandle = await nursery.start(
            partial(run_store_writer, data, lock_timeout_s=5.0, rows_for=chunk_rows)
        )
        for number, path in enumerate(paths):
            await store.append(path, [_chunk(0, f"quokka here {number}")])
        assert flushes == []  # acknowledged, not indexed yet
        with trio.fail_after(10):
            hits = await store.search("chunks", ["quokka"], journals=None, limit=10)
        assert sorted(hit.journal for hit in hits) == sorted(data.journal_name(path) for path in paths)
        assert flushes == [[data.journal_name(path) for path in paths]]
        await store.aclose()
