"""``doctor``'s checks of the disk and of what the store set aside (blocking; run in a worker thread).

* free space: below :data:`LOW_SPACE_BYTES` the data dir is full for every practical
  purpose: writes fail with "No space left on device", reads go on;
* ``lost-and-found/``: document generations no readable catalog record commits, moved
  there at startup (never deleted): each is named with its size, when it was set
  aside, and how to get its text back;
* ``quarantine/``: malformed journal lines, copied there and skipped.

Neither folder is damage doctor can repair, and neither stops anything from working,
so both are warnings: a person should look, once.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ..store.layout import not_writable
from ..text.plural import plural

if TYPE_CHECKING:
    from pathlib import Path

    from ..store.layout import DataDir

__all__ = ["LOW_SPACE_BYTES", "Aside", "free_space", "set_aside"]

#: Free bytes below which doctor calls the data dir's disk full.
LOW_SPACE_BYTES: Final = 1 << 20
#: Files named one by one; past this, a count.
SHOWN: Final = 10


@dataclass(frozen=True, slots=True)
class Aside:
    """One folder of set-aside files: a line per file shown, and a summary line."""

    area: str
    files: int
    summary: str
    details: tuple[str, ...]


def free_space(data: DataDir) -> tuple[bool, str]:
    """(enough room, one line) for the data dir's file system."""
    try:
        info = os.statvfs(data.root)
    except OSError as exc:
        return False, f"{data.root}: cannot tell the free space ({exc.strerror or exc})"
    free = info.f_bavail * info.f_frsize
    # Asked, not probed: plain doctor writes nothing (a server's start proves it by a probe file).
    if (why := not_writable(data.root)) is not None:
        return False, (
            f"{data.root}: not writable ({why}): a server and the commands that write refuse to start on it; "
            "sessions, show, export, docs, search and doctor (without --repair) read it"
        )
    if free < LOW_SPACE_BYTES:
        return False, (
            f"{data.root}: the disk is full ({free:,} bytes free): appends, ingests and imports fail; "
            "reads, show, export and sessions still work. Free some space"
        )
    return True, f"{data.root}: writable, {free / (1 << 20):,.0f} MB free"


def set_aside(data: DataDir) -> list[Aside]:
    """What lost-and-found and quarantine hold (nothing listed when both are empty)."""
    found: list[Aside] = []
    lost = _files(data.lost_found)
    if lost:
        details = tuple(
            f'{path.relative_to(data.root)}: {size:,} bytes, set aside {_when(mtime)}; its text is the "text" of '
            f"its chunk records in order (e.g. jq -r .text {path} > doc.md), then ctxtrio ingest doc.md"
            for path, size, mtime in lost[:SHOWN]
        )
        found.append(
            Aside(
                "lost-and-found",
                len(lost),
                f"{plural(len(lost), 'document generation')} no catalog record "
                f"commits (a damaged catalog line, see quarantine/) {'was' if len(lost) == 1 else 'were'} moved here, "
                "not deleted",
                details,
            )
        )
    bad = _files(data.quarantine)
    if bad:
        newest = max(mtime for _, _, mtime in bad)
        details = tuple(
            f"{path.relative_to(data.root)}: {size:,} bytes, {_when(mtime)}" for path, size, mtime in bad[:SHOWN]
        )
        found.append(
            Aside(
                "quarantine",
                len(bad),
                f"{plural(len(bad), 'malformed journal line')} {'was' if len(bad) == 1 else 'were'} copied here and "
                f"skipped (newest {_when(newest)}); the journals work without them: read them to "
                "recover anything by hand, then delete them",
                details,
            )
        )
    return found


def _files(root: Path) -> list[tuple[Path, int, float]]:
    out: list[tuple[Path, int, float]] = []
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            path = root.joinpath(folder, name)
            try:
                info = path.lstat()
            except OSError:
                continue
            out.append((path, info.st_size, info.st_mtime))
    return sorted(out, key=lambda item: item[2])


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))
