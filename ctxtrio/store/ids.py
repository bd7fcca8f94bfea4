"""Ids the model may send: validated before anything becomes a path, generated when absent."""

from __future__ import annotations

import re
import secrets
from typing import TYPE_CHECKING

from .._errors import InvalidIdError

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["ID_PATTERN", "new_id", "other_case", "validate_id"]

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def validate_id(value: str, what: str) -> str:
    """Return ``value`` if it is a safe id, else raise InvalidIdError saying what is allowed.

    The pattern admits no path separator, and ``.`` / ``..`` are excluded by its first
    character, so a valid id can always be used as one file name inside the data dir.
    """
    if not isinstance(value, str) or ID_PATTERN.fullmatch(value) is None:
        shown = value if isinstance(value, str) and len(value) <= 80 else f"{str(value)[:77]}..."
        raise InvalidIdError(
            f"invalid {what} {shown!r}: use 1-64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit"
        )
    return value


def other_case(value: str, known: Iterable[str]) -> str:
    """`` (ids are case-sensitive: X)`` when ``value`` names no id but differs from the known id X only in
    case, else "": a model that wrote 'Subprocess' for subprocess, told only "no document", tries others."""
    folded = value.casefold()
    for other in known:
        if other != value and other.casefold() == folded:
            return f" (ids are case-sensitive: {other})"
    return ""


def new_id(prefix: str) -> str:
    """A fresh random id such as ``doc-3f9a1c2e`` (32 random bits; collisions are checked by callers)."""
    return f"{prefix}-{secrets.token_hex(4)}"
