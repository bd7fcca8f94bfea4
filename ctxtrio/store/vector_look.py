"""What ``ctxtrio doctor`` without ``--repair`` reads of a vectors file, writing nothing to it.

Its layout and, for a file of this layout, what is embedded: through :func:`~.read_only.read_only`
(no migration, no healing, no file created, nothing left beside it; the commits of a server
writing the file meanwhile are read from its ``-wal``). A writer (the server, ``doctor
--repair``) opens the file with :func:`~.vector_schema.connect` instead, which migrates and heals.
"""

from __future__ import annotations

import functools
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._errors import StoreError
from .read_only import read_only
from .vector_counts import done_items
from .vector_schema import (
    BUSY_TIMEOUT_S,
    LEGACY_VERSIONS,
    ROWS_VERSION,
    TEXTS_VERSION,
    VectorsBusyError,
    is_busy,
    legacy_count,
    stored_dimensions,
    stored_texts_version,
)

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Layout", "look"]


@dataclass(frozen=True, slots=True)
class Layout:
    """A vectors file as :func:`look` read it."""

    #: ``user_version`` (0: no file, or one without tables) and the ``texts`` layout (None: no ``meta``).
    rows_version: int
    texts_version: int | None
    #: Vectors of the model looked for that an older layout holds: a schema 2 or 3 file's (taken with no
    #: request once migrated), or, in a file of this layout, those its migration kept that no part took yet.
    older: int = 0
    #: Of a file of this layout: the dimension looked at (the one asked, else the one stored, None: none or
    #: several), and journal -> items with rows of it (embedded, or refused for good).
    dimension: int | None = None
    done: dict[str, set[str]] = field(default_factory=dict)

    @property
    def current(self) -> bool:
        """Whether opening the file for writing leaves its layout as it is."""
        return self.rows_version == ROWS_VERSION and self.texts_version == TEXTS_VERSION

    def describe(self) -> str:
        """What a writer will do to a file of another layout ("" for this one or none)."""
        if self.current or (self.rows_version == 0 and self.texts_version is None):
            return ""
        if self.rows_version < ROWS_VERSION and self.texts_version is None:
            taken = f", its {self.older} vectors then taken with no request" if self.older else ""
            return (
                f"vectors file of an older layout (schema {self.rows_version}), left as it is: the server's next"
                f" start or doctor --repair migrates it{taken}"
            )
        return (
            f"vectors file of another layout (rows {self.rows_version}, texts {self.texts_version}), left as it is:"
            " the server's next start or doctor --repair takes it over"
        )


def look(path: Path, model: str, dim: int | None = None) -> Layout:
    """The file at ``path`` as it is, for ``model`` (``dim`` None: the one dimension stored), read
    without writing to it. VectorsBusyError or StoreError (damaged, unreadable) if it cannot be read."""
    if not path.exists():
        return Layout(0, None)
    try:
        return read_only(path, functools.partial(_look, model=model, dim=dim), busy_s=BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        kind = VectorsBusyError if is_busy(exc) else StoreError
        raise kind(f"cannot read vectors file {path}: {exc}") from exc


def _look(conn: sqlite3.Connection, *, model: str, dim: int | None) -> Layout:
    rows_version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    texts_version = stored_texts_version(conn)
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    layout = Layout(rows_version if tables else 0, texts_version)
    if not layout.current:
        if rows_version in LEGACY_VERSIONS and "vectors" in tables:
            query = "SELECT count(*) FROM vectors WHERE model=? AND part >= 0"
            return Layout(layout.rows_version, texts_version, int(conn.execute(query, (model,)).fetchone()[0]))
        return layout
    stored = stored_dimensions(conn, model)
    key = dim if dim is not None else (stored[0] if len(stored) == 1 else None)
    done = done_items(conn, model, key) if key is not None else {}
    return Layout(rows_version, texts_version, legacy_count(conn, model), key, done)
