"""The ``ctxtrio`` command: argv and environment → :class:`Config` → ``trio.run(serve_command)``.

Only :func:`main` lives here; the flags, variables and their conversion are generated
from the settings table by :mod:`ctxtrio.cli.settings`, and the subcommands are in
:mod:`ctxtrio.cli`. Precedence is flag > environment variable > default. Exit codes: 0
after a clean shutdown (stdin EOF, SIGTERM, SIGINT), 2 for a bad flag, value or data dir
(one line on stderr), 1 for a crash (traceback on stderr).
"""

from __future__ import annotations

import gc
import os
import sys
from functools import partial
from typing import TYPE_CHECKING

from ._errors import ConfigError, StoreError
from ._platform import require_posix

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ctxtrio`` command; returns the process exit code."""
    try:
        require_posix()  # before anything imports the store (fcntl) or the transports
    except ConfigError as exc:
        sys.stderr.write(f"ctxtrio: error: {exc}\n")
        return 2
    # Serving imports what lives as long as the process (the SDK's protocol models, our
    # modules, the settings table): no collection while they run. The collector ran 251
    # times during them (0.17 of their ~1.6 CPU-s, measured with gc.callbacks at load
    # 8). What they leave is then hidden from it (gc.freeze below), whose full
    # passes over ~170k permanent objects took ~95 ms here and stalled every call in
    # flight. A subcommand (or main() called again in one process) collects as usual.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _main(list(sys.argv[1:] if argv is None else argv), enabled)
    finally:
        if enabled:
            gc.enable()


def _main(args: list[str], enabled: bool) -> int:
    from .cli.commands import find_subcommand, unknown_command
    from .cli.output import err, listen_error, probe_listen, setup_logging
    from .cli.settings import build_config, value_flags

    if (found := find_subcommand(args, value_flags())) is not None:  # a subcommand; serving is the default
        from .cli.run import run

        if enabled:
            gc.enable()
        return run(*found)
    if (line := unknown_command(args, value_flags())) is not None:
        err(f"ctxtrio: error: {line}")
        return 2
    try:
        config = build_config(args, os.environ)
        from .store.layout import prepare_data_dir

        prepare_data_dir(config.data_dir)
    except (ConfigError, StoreError) as exc:
        err(f"ctxtrio: error: {exc}")
        return 2
    if config.transport == "http" and (line := probe_listen(config.http_host, config.http_port)) is not None:
        err(f"ctxtrio: error: {line}")
        return 2
    from .transport.warm_start import WarmStart, begin_warm_start

    warm: WarmStart | None = None
    if config.transport == "stdio" and config.warm_start:
        # Answer the host's first requests from recorded answers while the rest imports.
        warm = begin_warm_start(config.answer_settings)
    setup_logging(serving=True)
    import trio

    from ._app import serve_command
    from ._sdk import import_sdk

    import_sdk()
    # No collection before the freeze: the imports leave ~2,700 unreachable objects
    # (~1.1 MB; gc.DEBUG_SAVEALL at load 3), and a full pass over the ~170k they made
    # to find them cost 0.10-0.13 CPU-s a start. They stay, frozen with the rest.
    gc.freeze()
    if enabled:
        gc.enable()
    if config.transport == "http":
        # Many clients ingesting at once keep worker threads busy chunking and indexing; a
        # shorter GIL switch interval lets the event loop (and a context_status between
        # ingests) get the GIL back sooner. Measured: status p50 62 -> 32 ms under a storm.
        sys.setswitchinterval(0.001)

    try:
        trio.run(partial(serve_command, config, warm=warm))
    except (ConfigError, StoreError) as exc:  # the data dir or its index is unusable
        err(f"ctxtrio: error: {exc}")
        return 2
    except BaseException as exc:
        if (line := listen_error(exc, config.http_host, config.http_port)) is not None:
            err(f"ctxtrio: error: {line}")
            return 2
        raise
    return 0
