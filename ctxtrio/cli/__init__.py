"""The ``ctxtrio`` subcommands: a person's (and a script's) view of the data dir.

``ctxtrio.cli.run(name, argv)`` is what ``_cli.main`` calls when argv names a
subcommand (:mod:`.commands`). Every subcommand opens the data dir through the library
(``open_context``), so it is safe beside running servers on the same data dir: writes
go through the store writer, under the journals' locks, and servers replay them.
"""

from __future__ import annotations

from .run import run

__all__ = ["run"]
