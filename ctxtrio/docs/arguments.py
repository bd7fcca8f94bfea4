"""Checks and defaults for the document tools' arguments (ranges, titles, file reads)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._errors import InputError
from .._limits import CHUNK_INDEX, check_range
from .sandbox import check_text, read_source

if TYPE_CHECKING:
    from .._config import Config

__all__ = ["check_start_end", "clean_title", "first_line", "read_file"]


def read_file(file_path: str, config: Config, limit: int) -> tuple[str, str]:
    text, resolved = read_source(file_path, config.ingest_roots, max_bytes=limit)
    return check_text(text, max_chars=limit, name=str(resolved)), str(resolved)


def check_start_end(start: int | None, end: int | None, names: tuple[str, str] = ("start", "end")) -> None:
    """Check a chunk range; errors name its ends as the caller calls them.

    The library's methods say ``start``/``end`` (the default); the tools say ``from``/``to``
    and check with those names before calling the service.
    """
    first, last = names
    check_range(first, start, CHUNK_INDEX)
    check_range(last, end, CHUNK_INDEX)
    if start is not None and end is not None and end < start:
        raise InputError(f"{last}={end} is before {first}={start}; {last} is the last chunk to include")


def first_line(text: str) -> str:
    for line in text[:2000].splitlines():
        title = clean_title(line.lstrip("#").strip())
        if title:
            return title[:80]
    return ""


def clean_title(title: str | None) -> str:
    return " ".join(title.split())[:200] if title else ""
