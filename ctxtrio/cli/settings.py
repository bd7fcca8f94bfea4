"""The settings table (:func:`ctxtrio._config.settings`) as flags, as environment variables and as the README's table.

Nothing here names a setting: every flag, variable, conversion, help line and README row
is generated from the rows, so a new :class:`~ctxtrio._config.Config` field with a
``setting(...)`` is on the command line, in the environment and in ``--help`` at once
(``tests/test_settings_table.py`` holds the README to it). Precedence: flag > variable >
default; a variable set to the empty string counts as unset.
"""

from __future__ import annotations

import argparse
import os
import types
import typing
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NoReturn

from .._config import EMPTY_PATH_ADVICE, Config, settings
from .._errors import ConfigError
from .._setting import Setting, yes_no
from .._version import __version__
from .commands import SUBCOMMANDS

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

__all__ = [
    "ArgParser",
    "add_settings",
    "build_config",
    "config_from_args",
    "readme_table",
    "serving_parser",
    "value_flags",
]

#: The title of the settings' group in every parser's help (last in a subcommand's help).
GROUP = "settings (each also an environment variable; a flag wins over its variable)"


class ArgParser(argparse.ArgumentParser):
    """argparse that reports a bad flag in one line and exits 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


@cache
def _kinds() -> dict[str, object]:
    return typing.get_type_hints(Config)


def _base(kind: object) -> object:
    """``int | None`` -> ``int``; anything else as it is."""
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        (inner,) = (arg for arg in typing.get_args(kind) if arg is not type(None))
        return inner
    return kind


def _kind(row: Setting) -> object:
    return _base(_kinds()[row.name])


def _choices(row: Setting) -> tuple[str, ...]:
    kind = _kind(row)
    return tuple(typing.get_args(kind)) if typing.get_origin(kind) is Literal else ()


def _switches(row: Setting) -> list[str]:
    """The flags of a row: ``--audit`` and ``--no-audit`` for a bool, ``--stdio``, ``--http`` for switches."""
    assert row.flag is not None
    if _kind(row) is bool:
        return [row.flag, "--no-" + row.flag.removeprefix("--")]
    return row.flag.split("/")


def _default(row: Setting, *, markdown: bool) -> str:
    if row.shown:
        return row.shown if markdown else row.shown.replace("`", "")
    value = next(f for f in Config.__dataclass_fields__.values() if f.name == row.name).default
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    if isinstance(value, float):
        text = f"{value / row.unit:g}"
    else:
        text = str(value)
    return f"`{text}`" if markdown else text


def add_settings(p: argparse.ArgumentParser) -> None:
    """Add every setting's flag to ``p``, in one group titled :data:`GROUP` (after what ``p`` has: last in help).

    The usage line keeps only what ``p`` had, with ``[settings]`` for the rest.
    """
    if p.usage is None:
        p.usage = p.format_usage().removeprefix("usage: ").strip().replace(p.prog, "%(prog)s", 1) + " [settings]"
    group = p.add_argument_group(GROUP)
    for row in settings():
        if row.flag is None:
            continue
        help = f"{row.help.replace('`', '').replace('%', '%%')} [{row.env}; default: {_default(row, markdown=False)}]"
        if _kind(row) is bool:
            group.add_argument(row.flag, dest=row.name, action=argparse.BooleanOptionalAction, default=None, help=help)
        elif row.choices_as_flags:
            exclusive = group.add_mutually_exclusive_group()
            for switch in _switches(row):  # the help once, beside the first switch
                exclusive.add_argument(switch, dest=row.name, action="store_const", const=switch[2:], help=help)
                help = ""
        elif typing.get_origin(_kind(row)) is tuple:
            group.add_argument(row.flag, dest=row.name, action="append", metavar=row.metavar, help=help)
        else:
            group.add_argument(row.flag, dest=row.name, metavar=row.metavar, help=help)


def value_flags() -> set[str]:
    """The flags that take a value (``--data-dir DIR``): the word after them is not a subcommand."""
    return {row.flag for row in settings() if row.flag is not None and row.metavar and not row.choices_as_flags}


def serving_parser() -> argparse.ArgumentParser:
    """The parser of ``ctxtrio`` without a subcommand: serve."""
    width = max(map(len, SUBCOMMANDS)) + 2
    commands = "".join(f"\n  {name:<{width}}{line}" for name, line in SUBCOMMANDS.items())
    only_env = "".join(f"\n  {row.env}  {row.help.replace('`', '')}" for row in settings() if row.flag is None)
    p = ArgParser(
        prog="ctxtrio",
        usage="%(prog)s [--version] [settings]\n       %(prog)s COMMAND [options] [settings]",
        description="An MCP server that gives a local model durable session memory and paged documents.\n"
        "Without a command it serves (stdio unless --http); a command shows or manages the data dir.",
        epilog=f"commands (ctxtrio COMMAND --help):{commands}\n\nenvironment only:{only_env}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"ctxtrio {__version__}")
    add_settings(p)
    return p


def build_config(argv: Sequence[str], env: Mapping[str, str]) -> Config:
    """The validated Config for serving flags ``argv`` and ``env``; raises ConfigError (or exits 2 on a bad flag).

    Started in the filesystem's root, where some hosts start a server (an MCP SDK's stdio client without a
    ``cwd`` passes on its own working directory), a relative ``--data-dir`` or ``--ingest-root`` is refused: ``--ingest-root .``
    opened every file of the machine to ``doc_ingest`` and ``--data-dir state`` wrote ``/state``, silently.
    """
    args = serving_parser().parse_args(list(argv))
    if os.getcwd() == os.sep:
        _refuse_relative_paths(args, env)
    return config_from_args(args, env)


def _refuse_relative_paths(args: argparse.Namespace, env: Mapping[str, str]) -> None:
    """ConfigError naming the first path setting given as a relative path, each read as :func:`config_from_args`
    reads it (:func:`_given`, :func:`_convert`: a list of paths is split, one path is not)."""
    for row, value, source in _given(args, env):
        if _kind(row) is not Path and typing.get_origin(_kind(row)) is not tuple:
            continue
        converted = _convert(row, value, source)
        for path in converted if isinstance(converted, tuple) else (converted,):
            if not Path(path).expanduser().is_absolute():
                raise ConfigError(
                    f"{source} {str(path)!r} is a relative path and the working directory is {os.sep} (where some "
                    f"hosts start a server): it would mean {Path(os.sep, path)}; "
                    "give an absolute path"
                )


def _given(args: argparse.Namespace, env: Mapping[str, str]) -> Iterator[tuple[Setting, object, str]]:
    """Each setting given, as (its row, its value as given, the flag or variable it came from): the flag when
    given, else the variable when set to something (a variable set to the empty string counts as unset)."""
    for row in settings():
        given = getattr(args, row.name, None) if row.flag is not None else None
        if given is not None and row.flag is not None:
            yield row, given, row.flag
        elif (text := env.get(row.env, "")) != "":
            yield row, text, row.env


def config_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> Config:
    """The validated Config for parsed flags and ``env`` (flag > variable > default)."""
    changes: dict[str, object] = {}
    from_env: list[Setting] = []
    for row, value, source in _given(args, env):
        changes[row.name] = _convert(row, value, source)
        if source == row.env:
            from_env.append(row)
    # Each check names the setting as given: the variable a host config's env block set, not a flag the user
    # never wrote (which sent them looking through args for it).
    given = {row.flag: row.env for row in from_env if row.flag is not None}
    return Config().replace(**changes).validated(given=given)


def _convert(row: Setting, value: object, source: str) -> object:
    """A flag's or variable's value as the field's type; ConfigError naming ``source`` if it is not one."""
    kind = _kind(row)
    if isinstance(value, (bool, list)):  # a switch, or a repeated flag: argparse made it
        return tuple(_path(str(item), source) for item in value) if isinstance(value, list) else value
    text = str(value)
    if kind is bool:
        if (switch := yes_no(text)) is not None:
            return switch
        raise ConfigError(f"{source} must be true or false, got {text!r}")
    if choices := _choices(row):
        if text not in choices:
            raise ConfigError(f"{source} must be {_either(choices)}, got {text!r}")
        return text
    if kind is int or kind is float:
        try:
            return int(text.strip()) if kind is int else float(text.strip()) * row.unit
        except ValueError:
            raise ConfigError(f"{source} must be a number, got {text!r}") from None
    if kind is Path:
        return _path(text, source)
    if typing.get_origin(kind) is tuple:
        return tuple(Path(part) for part in text.split(os.pathsep) if part)
    return text


def _path(text: str, source: str) -> Path:
    """``text`` as a path; ConfigError for an empty one, which Path would take as '.', the working directory
    (``--data-dir ''`` stored there, ``--ingest-root ''`` opened it to reads). A variable set to '' is unset."""
    if text == "":
        raise ConfigError(f"{source} is an empty path: {EMPTY_PATH_ADVICE}")
    return Path(text)


def _either(choices: Iterable[str]) -> str:
    words = list(choices)
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]


def readme_table() -> str:
    """The README's configuration table, generated from the settings table."""
    lines = ["| Flag | Env | Default | Meaning |", "|---|---|---|---|"]
    for row in settings():
        if row.flag is None:
            flag = "—"
        elif row.metavar and not row.choices_as_flags:
            flag = f"`{row.flag} {row.metavar}`"
        else:
            flag = " / ".join(f"`{switch}`" for switch in _switches(row))
        lines.append(f"| {flag} | `{row.env}` | {_default(row, markdown=True)} | {row.help} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(readme_table())
