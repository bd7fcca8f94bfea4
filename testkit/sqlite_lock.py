"""Another process's hold on a SQLite file's write lock, one way for tests alike.

What a second server's write, a ``ctxtrio doctor --repair`` rebuilding or a CLI ingest holds:
``BEGIN IMMEDIATE`` takes the RESERVED lock ("no other connection will be able to write to the
database", https://www.sqlite.org/lang_transaction.html) until the transaction ends. A test
that lets go mid-block (``other.execute("ROLLBACK")``) to see what comes back keeps doing so;
whatever is still held is rolled back when the block ends.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["write_lock_held"]


@contextmanager
def write_lock_held(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection to ``path`` holding its write lock (``BEGIN IMMEDIATE``) while the block runs."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
