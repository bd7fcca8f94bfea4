"""The ``ctxtrio`` command line: the subcommands (a person's and a script's view of the data dir) and the settings.

``ctxtrio._cli.main`` finds a subcommand in argv (:mod:`.commands`) and runs it
(:func:`.run.run`), or builds the serving Config from the settings table
(:mod:`.settings`). Every subcommand opens the data dir through the library's component
tree (``_wiring.open_wiring``, what ``open_context`` runs), so it is safe beside running
servers on the same data dir: writes go through the store writer, under the journals'
locks, and servers replay them.
Nothing is imported here, so serving does not pay for the subcommands.
"""

from __future__ import annotations

__all__: list[str] = []
