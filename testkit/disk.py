"""A full disk on demand, one way for tests and attacks alike: a small tmpfs, filled.

tmpfs(5): "size: Specify an upper limit on the size of the filesystem"; write(2): "ENOSPC:
The device containing the file referred to by fd has no room for the data". Mounting needs
root (CAP_SYS_ADMIN); elsewhere :func:`small_tmpfs` says why not, and the caller skips.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["fill_disk", "free_bytes", "small_tmpfs"]


@contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[str | None]:
    """A tmpfs of ``size`` mounted at ``where`` (created) while the block runs; yields None once
    mounted, else why it is not (not root, or mount's own error). Unmounted lazily afterwards."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        yield "mounting a tmpfs needs root"
        return
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, check=False
    )
    if mounted.returncode:
        yield f"cannot mount a tmpfs: {mounted.stderr.decode(errors='replace').strip()}"
        return
    try:
        yield None
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill_disk(path: Path, *, leave_bytes: int = 0) -> None:
    """Write ``path`` until the disk holding it has at most ``leave_bytes`` free (ENOSPC ends it)."""
    with open(path, "wb", buffering=0) as filler, contextlib.suppress(OSError):
        while free_bytes(path.parent) > leave_bytes:
            filler.write(b"\0" * 4096)


def free_bytes(where: Path) -> int:
    """Bytes an unprivileged writer may still use on the disk holding ``where``."""
    room = os.statvfs(where)
    return room.f_bavail * room.f_frsize
