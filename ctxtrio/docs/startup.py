"""What a start does with the startup sweep's findings, and with index rows whose file is gone.

:func:`~.folders.sweep_folders` (blocking, in a worker thread) only looks: which generation
files are obsolete, which no readable record commits, which the index lags. The repository's
first refresh, after replaying the catalog, acts on that here through the store writer
(:func:`settle_sweep`), then drops the index rows of generation files already gone
(:func:`drop_rows_of_files_gone`). A read-only start does neither (see ``Repository._open``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from .._errors import StoreError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from ..store.handle import StoreHandle
    from ..store.layout import DataDir
    from .folders import Sweep

__all__ = ["drop_rows_of_files_gone", "settle_sweep"]

#: The repository's logger: these lines read as they did when the repository wrote them.
log = logging.getLogger("ctxtrio.docs")


async def settle_sweep(store: StoreHandle, data: DataDir, sweep: Sweep, lost: list[Path]) -> None:
    """Heal a damaged index, remove obsolete generations, move uncommitted or unreplaced ones to
    lost-and-found (appending where each went to ``lost`` as it goes) and catch the index up."""
    if sweep.damaged is not None:
        await store.heal(corrupt=sweep.damaged.corrupt)
    for path in sweep.remove:
        log.info("removing obsolete document generation %s", path)
        await store.remove(path)
    uncommitted = (
        "no readable catalog record commits it (its commit line may be damaged, see quarantine/, or a crash "
        "cut the file short before its commit landed)"
    )
    unreplaced = (
        "it was replaced, but the version that replaced it does not read whole (a crash in its fsync round, "
        "or damage since)"
    )
    for paths, why in ((sweep.lost, uncommitted), (sweep.kept, unreplaced)):
        for path in paths:
            target = data.lost_found / path.relative_to(data.root)
            log.warning("%s: %s: moved to %s, not deleted", path, why, target)
            await store.move(path, target)
            lost.append(target)
    for path in sweep.catch_up:
        await store.catch_up(path)
    if sweep.unchecked:  # (one line: a server's start beside a held lock said it once for every document)
        log.warning(
            "%d document(s) not checked against the search index, which cannot be opened now: the next "
            "search of them catches them up",
            len(sweep.unchecked),
        )
        await store.catch_up_later(sweep.unchecked)


async def drop_rows_of_files_gone(store: StoreHandle, root: Path, prefix: str, current: Mapping[str, object]) -> None:
    """Drop the index rows of generation files (journals under ``prefix``, not in ``current``) that are gone.

    A removal deletes the file and leaves its rows to the writer's next index flush; a process killed
    between left them for good (the sweep goes by the files), and ctxtrio doctor called them stale
    (exit 1) after every start until --repair."""
    try:
        names = await store.indexed_journals()
    except StoreError:
        return  # the index cannot be read now: the next start looks again
    gone = await trio.to_thread.run_sync(
        lambda: [
            name for name in names if name.startswith(prefix) and name not in current and not (root / name).exists()
        ]
    )
    for name in gone:
        log.info("dropping the search index rows of %s: its file is gone", name)
        await store.remove(root / name)  # the file is gone already: drops its rows
