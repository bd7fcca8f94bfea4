"""Which subcommands exist, and finding one in argv (cheap: runs before serving starts).

Serving stays the default: ``ctxtrio --ingest-root ./`` and every host configuration
that passes only flags never reach a subcommand. A word counts as a subcommand only
where a positional could stand, so ``--data-dir sessions`` is still a data dir.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable, Sequence

    import trio

    from .._config import Config

__all__ = ["SUBCOMMANDS", "Command", "find_subcommand"]

#: A subcommand: the config, its arguments, and the scope a signal cancels (see open_library).
Command: TypeAlias = "Callable[[Config, argparse.Namespace, trio.CancelScope], Awaitable[int]]"

#: name -> one-line help, in the order ``ctxtrio --help`` lists them.
SUBCOMMANDS: dict[str, str] = {
    "sessions": "list sessions (newest first)",
    "show": "one session's entries: roles, pins, tags, summaries and what they fold, status",
    "export": "write sessions to a portable JSONL file (or stdout)",
    "import": "read an export back (idempotent; says whether ids were preserved or remapped)",
    "delete": "delete sessions (asks unless --yes; reversible with restore until prune)",
    "restore": "bring deleted sessions back",
    "prune": "remove deleted sessions and retired entries for good (--dry-run shows what)",
    "docs": "list documents",
    "ingest": "ingest files, directories and globs (unchanged files are skipped)",
    "search": "search the documents",
    "doctor": "check the data dir, the search index and the LLM endpoint (--repair rebuilds the index)",
}


def find_subcommand(argv: Sequence[str], takes_value: set[str]) -> tuple[str, list[str]] | None:
    """``(name, the other arguments)`` when argv names a subcommand, else None (serve).

    ``takes_value``: the flags whose next word is their value (``settings.value_flags()``).
    """
    skip = False
    for position, word in enumerate(argv):
        if skip:
            skip = False
            continue
        if word == "--":
            return None
        if word.startswith("-"):
            skip = word in takes_value  # "--data-dir DIR"; "--data-dir=DIR" is one word
            continue
        if word in SUBCOMMANDS:
            return word, [*argv[:position], *argv[position + 1 :]]
        return None
    return None
