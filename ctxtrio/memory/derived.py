"""Writing the derived files kept beside session journals (summaries, snapshots). Blocking.

They are caches of what the journal says: written to a temporary file in the same
folder and renamed over the old one (readers see the old file or the new one, never
a mix), not fsynced, and a failure to write one is not an error.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = ["replace_file"]


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
