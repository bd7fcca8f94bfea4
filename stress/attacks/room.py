"""Full-disk attacks on the real server (issue 11: W3; "journals first" on a full disk, store/room.py).

Every attack runs ``python -m ctxtrio`` on a data dir in a small tmpfs, fills the disk, and
checks what the server says. Mounting a tmpfs needs root; elsewhere every row says it was
not run (and does not hold). Each spawn is bounded (60 s); nothing leaves loopback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from . import Row, guarded
from . import stdio_server as _server
from ._store_kit import call as _call
from ._store_kit import tmpfs

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path


async def disk_full(work: Path) -> Row:
    with tmpfs(work / "w3-mnt", "4m") as mounted:
        if not mounted:
            return Row(
                "W3 disk full during doc_ingest",
                '"No space left on device"',
                "not run: needs root to mount a tmpfs",
                False,
            )
        big = "\n\n".join(f"Paragraph {n}: the platypus count was {n} on that day." for n in range(110_000))
        async with _server(work / "w3-mnt" / "data") as client:
            ok, said = await _call(client, "doc_ingest", text=big, title="big")
            after, _ = await _call(client, "doc_ingest", text="The echidna lays eggs.", doc_id="e")
    clear = not ok and "No space left on device" in said
    return Row(
        "W3 disk full during doc_ingest (6 MB onto a 4 MB tmpfs)",
        '"No space left on device"; serves on',
        f"...{said[-60:]!r}; small ingest after: {'ok' if after else 'failed'}",
        clear and after,
    )


async def _main(work: Path) -> list[Row]:
    rows: list[Row] = []
    attacks: list[tuple[str, Callable[[], Awaitable[Row | list[Row]]]]] = [
        ("W3 disk full", lambda: disk_full(work)),
    ]
    for name, attack in attacks:
        rows.extend(await guarded(name, attack, 180))
    return rows


def run(work: Path) -> list[Row]:
    return trio.run(_main, work)
