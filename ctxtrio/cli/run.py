"""Parse a subcommand's arguments, build the Config, run it under trio, map the outcome to an exit code.

Exit codes: 0 done; 1 done, but something was refused, failed or found unhealthy (the
output says what); 2 a bad flag, value or data dir; 130 interrupted (Ctrl-C or
SIGTERM). An interrupted command stops at a clean boundary: the work in flight is
cancelled the library's way (an uncommitted ingest is discarded, an import never
writes half a session), and the store writer drains what was acknowledged.
"""

from __future__ import annotations

import os
import signal
from functools import partial
from typing import TYPE_CHECKING, Final

import trio

from .._errors import ConfigError, CtxError, Hint, InputError, StoreError, leaves
from ..store.layout import prepare_data_dir
from .commands import SUBCOMMANDS, Command
from .library import opens_read_only
from .output import CLOSED_PIPE, closed_pipe, err, failed_output, flush_output, setup_logging
from .settings import ArgParser, add_settings, config_from_args

if TYPE_CHECKING:
    import argparse

    from .._config import Config

__all__ = ["run"]
INTERRUPTED = 130


def build_parser(name: str) -> argparse.ArgumentParser:
    """The parser of one subcommand: its own arguments first, then the settings (data dir, LLM, ...) as a group."""
    from . import doctor, documents, sessions

    p = ArgParser(prog=f"ctxtrio {name}", description=SUBCOMMANDS[name])
    adders = {**sessions.ARGUMENTS, **documents.ARGUMENTS, **doctor.ARGUMENTS}
    if name in adders:
        adders[name](p)
    add_settings(p)
    return p


def _command(name: str) -> Command:
    from . import doctor, documents, sessions

    commands: dict[str, Command] = {**sessions.COMMANDS, **documents.COMMANDS, **doctor.COMMANDS}
    return commands[name]


def run(name: str, argv: list[str]) -> int:
    """Run subcommand ``name`` with ``argv`` (the rest of the command line); returns the exit code."""
    args = build_parser(name).parse_args(argv)
    try:
        config = config_from_args(args, os.environ)
        # A command that only reads creates nothing, not even the data dir's folders or a probe file
        # (which a read-only mount refuses); the command opens its store read-only (``args.read_only``).
        args.read_only = opens_read_only(name, args, config.data_dir)
        if not args.read_only:
            prepare_data_dir(config.data_dir)
    except (ConfigError, StoreError) as exc:
        err(f"ctxtrio: error: {exc}")
        return 2
    setup_logging(serving=False)
    try:
        code = trio.run(partial(_main, _command(name), config, args))
        flush_output()  # (a full disk behind "> file" fails here, not in Python's flush at exit)
    except BaseException as exc:
        if closed_pipe(exc):  # ctxtrio sessions | head -1: the reader has what it wanted
            return CLOSED_PIPE
        if (line := failed_output(exc)) is not None:
            err(line)
            return 1
        raise
    return code


async def _main(command: Command, config: Config, args: argparse.Namespace) -> int:
    # A signal cancels only the command's work (``stop``), not the library's store writer,
    # so cancelled work still cleans up through it and acknowledged appends drain.
    stop = trio.CancelScope()
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def stop_on_signal() -> None:
                async for _ in signals:
                    stop.cancel()
                    return

            nursery.start_soon(stop_on_signal)
            code = 0
            try:
                code = await command(config, args, stop)
            except* (ConfigError, InputError) as group:
                _say(group)
                code = 2
            except* CtxError as group:
                _say(group)
                code = 1
            nursery.cancel_scope.cancel()
    if stop.cancel_called:
        err("ctxtrio: interrupted: stopped cleanly; what was committed stays, nothing is half-written")
        return INTERRUPTED
    return code


#: What a command line user does next for each of the library's hints (tools/advice is the model's):
#: 'ctxtrio show nosuch' said only "no session 'nosuch'", where 'ctxtrio delete nosuch' named the list.
_ADVICE: Final[dict[Hint, str]] = {
    "list_sessions": "ctxtrio sessions lists them",
    "list_documents": "ctxtrio docs lists them",
    "list_entries": "ctxtrio show SESSION lists them",
    "store_as_document": "ctxtrio ingest stores a file as a document",
    "retry": "run it again",
    "free_space": "free space on the data dir's disk, then run it again",
}


def _say(group: BaseExceptionGroup[CtxError]) -> None:
    """One line per error (the library's message, and what to do for its hint); no traceback."""
    for exc in leaves(group):
        hint = exc.hint if isinstance(exc, CtxError) else None
        err(f"ctxtrio: error: {exc}" + (f"; {_ADVICE[hint]}" if hint is not None else ""))
