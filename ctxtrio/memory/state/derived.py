"""Writing and reading the derived files kept beside session journals (summaries, snapshots, slices). Blocking.

They are caches of what the journal says: written to a temporary file in the same
folder and renamed over the old one (readers see the old file or the new one, never
a mix), not fsynced, and a failure to write one is not an error.

They are read as untrusted bytes (:func:`read_derived`): read into memory, never
mapped (a file cut short under a mapping kills the process with SIGBUS), only when it
is a regular file reached without a symlink (a ``.summary.json`` pointing at
``/dev/zero`` would be read forever), and only up to a size its journal can justify.
Whoever reads one then checks its checksum and the journal offset it claims, and
rebuilds it from the journal when either does not hold.
"""

from __future__ import annotations

import os
import stat
import threading
from typing import TYPE_CHECKING

from ...text.tokens import ScriptClass

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from ...text.tokens import TokenModel

__all__ = ["model_key", "open_derived", "read_derived", "replace_file"]


def model_key(model: TokenModel) -> str:
    """What identifies a token model's counts (its rates and where they came from), as derived files record it."""
    return model.source + "|" + ",".join(repr(model.rates[cls]) for cls in ScriptClass)


def replace_file(target: Path, chunks: Iterable[bytes | memoryview]) -> bool:
    """Write ``chunks`` as ``target`` atomically; False (and no temporary left) if that failed."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(temporary, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
        os.replace(temporary, target)
    except OSError:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass
        return False
    return True


def open_derived(path: Path, flags: int) -> int:
    """A descriptor of ``path`` opened without following a symlink, and only if it is a regular file (OSError otherwise)."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_derived(path: Path, limit: int) -> bytes | None:
    """The bytes of a derived file, or None when it is missing, not a regular file, a symlink, or over ``limit`` bytes."""
    try:
        fd = open_derived(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            return None
        parts: list[bytes] = []
        left = size
        while left > 0:
            part = os.read(fd, left)
            if not part:
                break
            parts.append(part)
            left -= len(part)
        return b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)
