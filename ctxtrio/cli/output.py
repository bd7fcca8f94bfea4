"""What subcommands print: JSON for scripts, short lines for people, questions on a terminal.

stdout carries the result (text, or one JSON document with ``--json``); errors,
progress and questions go to stderr, so ``ctxtrio export --all > file`` and
``ctxtrio docs --json | jq`` stay clean.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import sys
import time
from typing import TextIO

from .._errors import InputError, leaves
from ..text.harmless import BIDI, CONTROLS, harmless

__all__ = [
    "CLOSED_PIPE",
    "OutputError",
    "ask",
    "closed_pipe",
    "emit_json",
    "err",
    "failed_output",
    "flush_output",
    "harmless",
    "listen_error",
    "parse_duration",
    "probe_listen",
    "say",
    "setup_logging",
    "when",
    "write_out",
]

#: The exit code of a command whose reader went away (``ctxtrio sessions | head -1``): 128 + SIGPIPE, as git's.
CLOSED_PIPE = 141

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw]?)")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}

#: What JSON (ensure_ascii=False) leaves raw of those: C0 it escapes itself.
_JSON_RAW = str.maketrans({c: f"\\u{c:04x}" for c in (*CONTROLS, *BIDI) if c >= 0x7F})


def closed_pipe(error: BaseException) -> bool:
    """True when ``error`` is only the reader of stdout going away; stdout is then pointed at /dev/null.

    Python flushes stdout once more at exit, which would fail again and print "Exception
    ignored"; with /dev/null behind the descriptor that last flush succeeds quietly.
    """
    if not all(isinstance(leaf, BrokenPipeError) for leaf in leaves(error)):
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return True


class OutputError(Exception):
    """stdout could not be written (``> file`` on a full disk, ``> /dev/full``): one line and exit 1, not a
    traceback. Not a CtxError: the library never writes stdout. A reader going away stays BrokenPipeError."""


def failed_output(error: BaseException) -> str | None:
    """The line to say when ``error`` is only stdout failing (:class:`OutputError`), else None; stdout
    is then pointed at /dev/null, so the flush at exit does not fail again (as :func:`closed_pipe`)."""
    found = leaves(error)
    if not all(isinstance(leaf, OutputError) for leaf in found):
        return None
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return f"ctxtrio: error: {found[0]}; the output is incomplete"


def write_out(text: str, out: TextIO | None = None) -> None:
    """``text`` on stdout (or ``out``); OutputError when it cannot be written, BrokenPipeError as it is."""
    try:
        (out if out is not None else sys.stdout).write(text)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write the output: {exc.strerror or exc}") from exc


def flush_output() -> None:
    """Flush stdout now, where a failure is :class:`OutputError` (at exit, Python would only print it)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write the output: {exc.strerror or exc}") from exc


def listen_error(error: BaseException, host: str, port: int) -> str | None:
    """One line for a listening socket that could not be had (port in use, not allowed), else None."""
    for leaf in leaves(error):
        if isinstance(leaf, OSError) and leaf.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
            what = {
                errno.EADDRINUSE: "the port is in use (another ctxtrio?)",
                errno.EACCES: "not allowed (ports below 1024 need privileges)",
                errno.EADDRNOTAVAIL: "no such local address",
            }[leaf.errno]
            return f"cannot listen on {host}:{port}: {what}; pick another with --port, or --port 0 for any free one"
    return None


def probe_listen(host: str, port: int) -> str | None:
    """Bind ``host:port`` once (as the server will, SO_REUSEADDR) and let go: :func:`listen_error`'s line, or None.

    Run before serving starts, so a port clash is one line, not a line after the startup log.
    """
    import socket

    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return None  # the server says what is wrong with the host
    for family, kind, proto, _, address in infos[:1]:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                return listen_error(exc, host, port)
    return None


class _HarmlessFormatter(logging.Formatter):
    """Log lines made :func:`harmless`: warnings name documents and files, and stderr is a terminal too."""

    def format(self, record: logging.LogRecord) -> str:
        return harmless(super().format(record))


def setup_logging(*, serving: bool) -> None:
    """The one logging setup of the command: INFO and up when serving, WARNING and up for a subcommand, on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_HarmlessFormatter("ctxtrio %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO if serving else logging.WARNING, handlers=[handler])
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per LLM request is noise


def emit_json(value: object, out: TextIO | None = None) -> None:
    """One JSON document on stdout; DEL, C1 and bidi controls written as JSON escapes (the same value parsed)."""
    # These stand only inside JSON strings, so the escape is always JSON's own; export keeps its bytes instead.
    write_out(json.dumps(value, ensure_ascii=False, indent=2).translate(_JSON_RAW) + "\n", out)


def say(line: str) -> None:
    """One line of the result on stdout (the subcommands' only stdout writer besides emit_json), made :func:`harmless`."""
    write_out(harmless(line) + "\n")


def err(message: str) -> None:
    """One line on stderr, made :func:`harmless`."""
    sys.stderr.write(harmless(message) + "\n")
    sys.stderr.flush()


def when(ts: float | None) -> str:
    """A Unix time as local ``YYYY-MM-DD HH:MM`` (``-`` when unknown)."""
    if not ts:
        return "-"
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))
    except (OverflowError, ValueError, OSError):  # NaN, 1e308: not a time
        return "-"


def parse_duration(text: str) -> float:
    """``90``, ``45s``, ``30m``, ``12h``, ``7d``, ``2w`` (or a sum: ``1d12h``) -> seconds."""
    compact = text.strip().lower().replace(" ", "")
    if not compact or _DURATION.sub("", compact):
        raise InputError(f"bad duration {text!r}: use a number with s, m, h, d or w (for example 30d or 12h)")
    return sum(float(number) * _UNITS[unit] for number, unit in _DURATION.findall(compact))


def ask(question: str, *, yes: bool) -> bool:
    """True when ``yes`` was given or a person at the terminal answers y; refuses without a terminal."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise InputError("not asking without a terminal: pass --yes to go ahead")
    sys.stderr.write(f"{harmless(question)} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")
