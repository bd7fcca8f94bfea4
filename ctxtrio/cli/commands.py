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

__all__ = ["SUBCOMMANDS", "Command", "find_subcommand", "unknown_command"]

#: A subcommand: the config, its arguments (``read_only`` among them: ``library.opens_read_only``), and
#: the scope a signal cancels (see open_library).
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
    "ingest": "ingest files, folders and globs (.gitignore honoured; binary and unchanged files skipped)",
    "search": "search the documents: matching lines with their file (--full: whole chunks)",
    "forget": "remove documents from the store for good (asks unless --yes; the files stay)",
    "doctor": "check the data dir, the search index, the vectors and the LLM endpoint "
    "(--repair mends the index and the vectors, and has embeddings refused before sent again)",
}


def find_subcommand(argv: Sequence[str], takes_value: set[str]) -> tuple[str, list[str]] | None:
    """``(name, the other arguments)`` when argv names a subcommand, else None (serve).

    ``takes_value``: the flags whose next word is their value (``settings.value_flags()``).
    """
    found = _first_word(argv, takes_value)
    if found is None or found[1] not in SUBCOMMANDS:
        return None
    position, word = found
    return word, [*argv[:position], *argv[position + 1 :]]


def unknown_command(argv: Sequence[str], takes_value: set[str]) -> str | None:
    """The one-line error for a word where a subcommand could stand that is none (with the nearest one), else None."""
    import difflib

    found = _first_word(argv, takes_value)
    if found is None or found[1] in SUBCOMMANDS:
        return None
    word = found[1]
    near = difflib.get_close_matches(word, list(SUBCOMMANDS), n=1, cutoff=0.6)
    hint = f"did you mean {near[0]}?" if near else f"the commands are {', '.join(SUBCOMMANDS)}"
    return f"unknown command {word!r}: {hint} (ctxtrio --help says what each does)"


def _first_word(argv: Sequence[str], takes_value: set[str]) -> tuple[int, str] | None:
    """Where the first word that is neither a flag nor a flag's value stands, and the word."""
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
        return position, word
    return None
