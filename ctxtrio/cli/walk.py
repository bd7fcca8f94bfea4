"""Turning ``ingest PATH...`` into files to ingest and the roots that sandbox them (blocking).

Each argument is a file, a directory (walked, symlinks not followed) or a glob
(``docs/**/*.md``). Unless ``--ingest-root`` (or ``CTX_INGEST_ROOTS``) names the roots,
each argument's own directory is its root: a directory is the root of what is under
it, a glob's fixed part is, a file's parent is. Nothing is read here: every candidate
goes through the same checks as ``doc_ingest`` (:mod:`ctxtrio.docs.sandbox`), so a
symlink out of its root, a FIFO or a binary file is refused there, by name.
Names starting with ``.`` (``.git``, ``.venv``) are skipped inside directories.
"""

from __future__ import annotations

import glob
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Found", "find_files"]

_MAGIC = set("*?[")


@dataclass(slots=True)
class Found:
    """Candidates in order (with sizes for progress), roots, and what was refused before reading."""

    files: list[tuple[Path, int]] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)


def _size(path: Path) -> int:
    """Bytes of a regular file, for progress only (0 for a symlink, FIFO or anything else)."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _root_of_glob(pattern: str) -> Path:
    parts: list[str] = []
    for part in Path(pattern).parts:
        if _MAGIC & set(part):
            break
        parts.append(part)
    return Path(*parts) if parts else Path(".")


def find_files(arguments: list[str], roots: tuple[Path, ...]) -> Found:
    """Every candidate file named by ``arguments``; ``roots`` empty means "derive them"."""
    found = Found(roots=list(roots))
    seen: set[Path] = set()

    def add(path: Path) -> None:
        absolute = Path(os.path.abspath(path))
        if absolute not in seen:
            seen.add(absolute)
            found.files.append((absolute, _size(absolute)))

    def add_root(root: Path) -> None:
        if not roots and root.is_dir() and Path(os.path.abspath(root)) not in found.roots:
            found.roots.append(Path(os.path.abspath(root)))

    for argument in arguments:
        path = Path(argument)
        if _MAGIC & set(argument) and not os.path.lexists(argument):
            matches = sorted(glob.glob(argument, recursive=True))
            add_root(_root_of_glob(argument))
            if not matches:
                found.refused.append((argument, "no file matches this pattern"))
            for match in matches:
                if not Path(match).is_dir() or Path(match).is_symlink():
                    add(Path(match))
        elif path.is_dir() and not path.is_symlink():
            add_root(path)
            _walk(path, add, found)
        elif os.path.lexists(path):
            add_root(path.parent)
            add(path)
        else:
            found.refused.append((argument, "no such file or directory"))
    return found


def _walk(top: Path, add: Callable[[Path], None], found: Found) -> None:
    for directory, dirnames, filenames in os.walk(top, followlinks=False):
        base = Path(directory)
        for name in sorted(dirnames):
            if (base / name).is_symlink():
                found.refused.append((str(base / name), "a symlinked directory: not followed"))
        dirnames[:] = sorted(name for name in dirnames if not name.startswith(".") and not (base / name).is_symlink())
        for name in sorted(filenames):
            if not name.startswith("."):
                add(base / name)
