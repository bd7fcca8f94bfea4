"""Glob patterns as git and ripgrep read them: ``.gitignore`` files, ``--exclude``/``--include``, ``ingest 'docs/**'``.

One translation serves all three (gitignore(5), "PATTERN FORMAT"): ``*`` and ``?`` never
match ``/``; ``**`` as a whole segment matches any number of directories (``a/**/b``,
``**/b``, ``a/**``); ``[...]`` is a character class (``[!...]`` negates). A pattern with a
``/`` other than a trailing one is anchored to its base directory; one without matches a
name at any depth. A trailing ``/`` matches directories only; a leading ``!`` re-includes
what an earlier line excluded. Nothing here touches the filesystem but
:func:`read_gitignore`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = ["Rule", "glob_regex", "ignored", "parse_rules", "read_gitignore"]


def glob_regex(pattern: str) -> str:
    """The regex (without anchors) matching what the slash-separated glob ``pattern`` matches."""
    out: list[str] = []
    segments = pattern.split("/")
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]*/)*")
            continue
        out.append(_segment(segment))
        if not last:
            out.append("/")
    return "".join(out)


def _segment(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := segment.find("]", i + 2)) != -1:
            body = segment[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            out.append("[" + ("^/" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        elif char == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern line: what it matches (relative to ``base``), whether it re-includes, directories only."""

    regex: re.Pattern[str]
    negate: bool
    directory_only: bool
    #: The directory the pattern is relative to, as a path relative to the walk's top ("" for the top).
    base: str


def parse_rules(lines: Sequence[str], base: str = "") -> list[Rule]:
    """The rules of a ``.gitignore`` (or of ``--exclude`` patterns) whose directory is ``base``."""
    rules: list[Rule] = []
    for raw in lines:
        line = raw.rstrip("\n").rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        negate = line.startswith("!")
        if negate or line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        directory_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        body = glob_regex(line.lstrip("/"))
        regex = body if anchored else f"(?:.*/)?{body}"
        rules.append(Rule(re.compile(regex + r"\Z", re.S), negate, directory_only, base))
    return rules


def ignored(rules: Sequence[Rule], relative: str, *, is_dir: bool) -> bool:
    """Whether the last rule matching ``relative`` (a path under the walk's top) excludes it."""
    verdict = False
    for rule in rules:
        if rule.directory_only and not is_dir:
            continue
        if rule.base:
            if not relative.startswith(rule.base + "/"):
                continue
            path = relative[len(rule.base) + 1 :]
        else:
            path = relative
        if rule.regex.match(path):
            verdict = not rule.negate
    return verdict


def read_gitignore(directory: Path, base: str) -> list[Rule]:
    """The rules of ``directory/.gitignore`` (none when it is absent or unreadable)."""
    try:
        text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return parse_rules(text.splitlines(), base)
