"""What subcommands print: JSON for scripts, short lines for people, questions on a terminal.

stdout carries the result (text, or one JSON document with ``--json``); errors,
progress and questions go to stderr, so ``ctxtrio export --all > file`` and
``ctxtrio docs --json | jq`` stay clean.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import TextIO

from .._errors import InputError

__all__ = ["ask", "emit_json", "err", "parse_duration", "say", "setup_logging", "when"]

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw]?)")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def setup_logging(*, serving: bool) -> None:
    """The one logging setup of the command: INFO and up when serving, WARNING and up for a subcommand, on stderr."""
    logging.basicConfig(
        level=logging.INFO if serving else logging.WARNING,
        stream=sys.stderr,
        format="ctxtrio %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per LLM request is noise


def emit_json(value: object, out: TextIO | None = None) -> None:
    """One JSON document on stdout."""
    stream = out if out is not None else sys.stdout
    stream.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def say(line: str) -> None:
    """One line of the result on stdout (the subcommands' only stdout writer besides emit_json)."""
    sys.stdout.write(line + "\n")


def err(message: str) -> None:
    """One line on stderr."""
    sys.stderr.write(message + "\n")
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
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")
