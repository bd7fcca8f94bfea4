"""One row of the settings table and how a setting's text is read.

:class:`Setting` is how one :class:`~ctxtrio._config.Config` field is set from outside
(flag, variable, help); :func:`setting` makes the dataclass field that carries it. The
rest reads values the same way everywhere: :func:`yes_no` for switches written as text
(a flag, a variable, a tool argument), :func:`is_loopback_host` for the HTTP bind
address, :func:`default_data_dir` for where state lives when none is given.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import platformdirs

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Setting", "default_data_dir", "is_loopback_host", "setting", "yes_no"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Setting:
    """One row of the settings table: how a :class:`Config` field is set from outside.

    The field gives the name, the type and the default; this row gives the rest. The
    command line (:mod:`ctxtrio.cli.settings`), the environment mapping and the README's
    configuration table are all generated from these rows, so adding a setting is adding
    one field with one ``setting(...)``.
    """

    name: str
    #: ``--data-dir``; for a bool ``--audit`` also makes ``--no-audit``; None: environment only.
    flag: str | None
    env: str
    #: What the value is called in help (``DIR``, ``S``); empty for a switch.
    metavar: str
    help: str
    #: The default as a person reads it, when the value alone does not say it.
    shown: str = ""
    #: A flag or variable value times ``unit`` is the field's value (0.001: given in ms, kept in s).
    unit: float = 1.0
    #: A Literal setting given as one switch per value (flag ``--stdio/--http``), not ``--flag VALUE``.
    choices_as_flags: bool = False


@overload
def setting(
    default: Callable[[], T],
    flag: str | None,
    env: str,
    metavar: str,
    help: str,
    *,
    factory: Literal[True],
    shown: str = ...,
    unit: float = ...,
    choices_as_flags: bool = ...,
    secret: bool = ...,
) -> T: ...
@overload
def setting(
    default: T,
    flag: str | None,
    env: str,
    metavar: str,
    help: str,
    *,
    factory: Literal[False] = ...,
    shown: str = ...,
    unit: float = ...,
    choices_as_flags: bool = ...,
    secret: bool = ...,
) -> T: ...
def setting(
    default: Any,
    flag: str | None,
    env: str,
    metavar: str,
    help: str,
    *,
    factory: bool = False,
    shown: str = "",
    unit: float = 1.0,
    choices_as_flags: bool = False,
    secret: bool = False,
) -> Any:
    """A dataclass field carrying its :class:`Setting` row (typed as its default, so the field keeps its type).

    ``secret``: left out of the config's repr (a token or key printed with the config, in a log line, a
    traceback's locals or a failed assertion, is a leaked credential)."""
    row = Setting("", flag, env, metavar, help, shown, unit, choices_as_flags)
    if factory:
        return field(default_factory=default, metadata={"setting": row}, repr=not secret)
    return field(default=default, metadata={"setting": row}, repr=not secret)


def default_data_dir() -> Path:
    """The platform's per-user data directory for ctxtrio (``~/.local/share/ctxtrio`` on Linux)."""
    return Path(platformdirs.user_data_dir("ctxtrio", appauthor=False))


_YES = frozenset({"1", "true", "yes", "on"})
_NO = frozenset({"0", "false", "no", "off"})


def yes_no(text: str) -> bool | None:
    """``text`` as a yes/no answer (1/0, true/false, yes/no, on/off, any case, spaces around), else None.

    The one reading of a switch written as text: a setting's flag or variable, and a
    boolean tool argument a client sent as a string.
    """
    word = text.strip().lower()
    return True if word in _YES else False if word in _NO else None


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and every address in 127.0.0.0/8 or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
