"""The one platform check: ctxtrio runs on POSIX (Linux, macOS) only.

The store locks journals with ``fcntl.flock`` (``store/journal.py``), stdio is read
through trio's ``FdStream`` (``transport/stdio.py``) and the warm start waits with
``select.poll`` (``transport/warm_start.py``): none of them exists on Windows. The
library's entry (``ctxtrio.<name>``, see ``ctxtrio/__init__.py``) and the CLI call
:func:`require_posix` before importing any of them, so a Windows user gets this one
error instead of an ``ImportError`` from deep inside.
"""

from __future__ import annotations

import os

from ._errors import ConfigError

__all__ = ["POSIX_ONLY", "on_posix", "require_posix"]

POSIX_ONLY = "ctxtrio runs on POSIX (Linux, macOS); on Windows use WSL or Docker"


def on_posix() -> bool:
    """Whether this is a POSIX system (``os.name == "posix"``; Cygwin and WSL count)."""
    return os.name == "posix"


def require_posix() -> None:
    """Raise ConfigError with :data:`POSIX_ONLY` unless this is a POSIX system."""
    if not on_posix():
        raise ConfigError(POSIX_ONLY)
