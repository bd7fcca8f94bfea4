"""Turning ``ingest PATH...`` into files to ingest and the roots that sandbox them (blocking).

Each argument is a file, a directory (walked; a link to one named as an argument is walked
where it leads) or a glob (``docs/**/*.md``, matched while walking its fixed part). Walks
follow no directory symlink they meet (counted, not followed: a link to ``.`` cannot loop), skip names starting with ``.`` (``.git``, ``.venv``), honour
``.gitignore`` files as git does and ``--exclude``/``--include`` globs (:mod:`.patterns`);
a file named as an argument is always taken. A symlink to a file that is also listed is
taken once. Unless ``--ingest-root`` (or ``CTX_INGEST_ROOTS``) names the roots, each
argument's own directory is its root: a directory is the root of what is under it, a
glob's fixed part is, a file's parent is. Nothing is read here: every candidate goes
through the same checks as ``doc_ingest`` (:mod:`ctxtrio.docs.sandbox`), so a symlink
out of its root, a FIFO or an oversized file is refused there, by name.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .patterns import Rule, glob_regex, ignored, parse_rules, read_gitignore

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


__all__ = ["Found", "find_files"]

_MAGIC = set("*?[")
#: Why a walk left something out without naming it (counted in the summary; listed with --verbose).
LINKED_DIRECTORY = "symlinked directory"
DUPLICATE_LINK = "symlink to a file already listed"


@dataclass(slots=True)
class Found:
    """Candidates in order (with sizes for progress), roots, what was refused and what was skipped."""

    files: list[tuple[Path, int]] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_paths: list[tuple[Path, str]] = field(default_factory=list)
    #: The files named as arguments themselves (absolute, as in ``files``): one refused is an argument that
    #: stored nothing (``ingest``'s exit code).
    named: set[Path] = field(default_factory=set)

    def skip(self, path: Path, reason: str) -> None:
        self.skipped[reason] += 1
        self.skipped_paths.append((path, reason))


@dataclass(frozen=True, slots=True)
class _Filters:
    exclude: list[Rule]
    include: list[Rule]


def _size(path: Path) -> int:
    """Bytes of a regular file, for progress only (0 for a symlink, FIFO or anything else)."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _split_glob(pattern: str) -> tuple[Path, str]:
    """``docs/**/*.md`` -> (``docs``, ``**/*.md``): the fixed directory and the pattern under it."""
    parts = pattern.split("/")
    fixed: list[str] = []
    for part in parts:
        if _MAGIC & set(part):
            break
        fixed.append(part)
    rest = "/".join(parts[len(fixed) :])
    if not fixed:
        return Path("."), rest
    return Path("/".join(fixed) or "/"), rest


def find_files(
    arguments: list[str], roots: tuple[Path, ...], *, exclude: Sequence[str] = (), include: Sequence[str] = ()
) -> Found:
    """Every candidate file named by ``arguments``; ``roots`` empty means "derive them"."""
    found = Found(roots=list(roots))
    filters = _Filters(parse_rules(exclude), parse_rules(include))
    candidates: list[Path] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        absolute = Path(os.path.abspath(path))
        if absolute not in seen:
            seen.add(absolute)
            candidates.append(absolute)

    def add_root(root: Path) -> None:
        if not roots and root.is_dir() and Path(os.path.abspath(root)) not in found.roots:
            found.roots.append(Path(os.path.abspath(root)))

    for argument in arguments:
        path = Path(argument)
        if _MAGIC & set(argument) and not os.path.lexists(argument):
            top, rest = _split_glob(argument)
            # What the glob matched, not what it added: files an earlier argument listed are a match too.
            matched: list[Path] = []
            if top.is_dir():
                top = _followed(top)
                add_root(top)
                depth = None if "**" in rest.split("/") else rest.count("/") + 1
                _walk(
                    top, matched.append, found, filters, match=re.compile(glob_regex(rest) + r"\Z", re.S), depth=depth
                )
            for match in matched:
                add(match)
            if not matched:
                found.refused.append((argument, "no file matches this pattern"))
        elif path.is_dir():
            top = _followed(path)
            add_root(top)
            _walk(top, add, found, filters)
        elif os.path.lexists(path):
            add_root(path.parent)
            add(path)
            found.named.add(Path(os.path.abspath(path)))
        else:
            found.refused.append((argument, "no such file or directory"))
    _once(candidates, found)
    return found


def _followed(directory: Path) -> Path:
    """A directory named as an argument, or the one a link named so leads to: a person who types a link to a folder
    means the folder (``find -H`` and ``grep -r`` follow a link given on the command line, and only there). Walked
    where it leads, which is also its root: the sandbox follows links before checking a file against its root, and
    every file is stored by its resolved path. Links met while walking are still counted, not followed."""
    return Path(os.path.realpath(directory)) if directory.is_symlink() else directory


def _once(candidates: list[Path], found: Found) -> None:
    """Candidates into ``found.files``, a symlink whose file is already listed (or linked before) left out."""
    links = {path: os.path.realpath(path) for path in candidates if os.path.islink(path)}
    listed = {str(path) for path in candidates if path not in links}
    for path in candidates:
        target = links.get(path)
        if target is not None:
            if target in listed:
                found.skip(path, DUPLICATE_LINK)
                continue
            listed.add(target)
        found.files.append((path, _size(path)))


def _walk(
    top: Path,
    add: Callable[[Path], None],
    found: Found,
    filters: _Filters,
    *,
    match: re.Pattern[str] | None = None,
    depth: int | None = None,
) -> None:
    """Add the files under ``top`` that no rule leaves out (and that ``match``, if given, matches)."""
    rules: dict[str, list[Rule]] = {}
    for directory, dirnames, filenames in os.walk(top, followlinks=False):
        base = Path(directory)
        relative = os.path.relpath(directory, top)
        relative = "" if relative == "." else relative
        parent = relative.rpartition("/")[0] if "/" in relative else ""
        here = rules[relative] = [*(rules.get(parent, []) if relative else []), *read_gitignore(base, relative)]
        level = relative.count("/") + 1 if relative else 0

        def path_of(name: str) -> str:
            return f"{relative}/{name}" if relative else name

        kept: list[str] = []
        for name in sorted(dirnames):
            if name.startswith(".") or ignored(here, path_of(name), is_dir=True):
                continue
            if ignored(filters.exclude, path_of(name), is_dir=True):
                continue
            if (base / name).is_symlink():
                found.skip(base / name, LINKED_DIRECTORY)
                continue
            if depth is None or level + 1 < depth:
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = path_of(name)
            if name.startswith(".") or ignored(here, rel, is_dir=False) or ignored(filters.exclude, rel, is_dir=False):
                continue
            if filters.include and not ignored(filters.include, rel, is_dir=False):
                continue
            if match is None or match.match(rel):
                add(base / name)
