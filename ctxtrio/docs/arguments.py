"""Checks and defaults for the document tools' arguments (ranges, titles, file reads)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._errors import InputError
from .._limits import CHUNK_INDEX, called, check_range
from .sandbox import check_text, read_source

if TYPE_CHECKING:
    from .._config import Config

__all__ = ["check_start_end", "clean_title", "first_line", "read_file"]


def read_file(file_path: str, config: Config, limit: int) -> tuple[str, str]:
    text, resolved = read_source(file_path, config.ingest_roots, max_bytes=limit)
    return check_text(text, max_chars=limit, name=str(resolved)), str(resolved)


def check_start_end(start: int | None, end: int | None) -> None:
    """Check a chunk range; errors name its ends as the caller calls them.

    The library's methods say ``start``/``end``; the tools say ``from``/``to`` and call the
    service inside :func:`~ctxtrio._limits.calling`.
    """
    check_range("start", start, CHUNK_INDEX)
    check_range("end", end, CHUNK_INDEX)
    first, last = called("start"), called("end")
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
