"""Checks and defaults for the document tools' arguments (ranges, titles, file reads)."""

from __future__ import annotations

from .._config import Config
from .._errors import InputError
from .._limits import CHUNK_INDEX, check_range
from .sandbox import check_text, read_source

__all__ = ["check_start_end", "clean_title", "first_line", "read_file"]


def read_file(file_path: str, config: Config, limit: int) -> tuple[str, str]:
    text, resolved = read_source(file_path, config.ingest_roots, max_bytes=limit)
    return check_text(text, max_chars=limit, name=str(resolved)), str(resolved)


def check_start_end(start: int | None, end: int | None) -> None:
    check_range("from", start, CHUNK_INDEX)
    check_range("to", end, CHUNK_INDEX)
    if start is not None and end is not None and end < start:
        raise InputError(f"to={end} is before from={start}; to is the last chunk to include")


def first_line(text: str) -> str:
    for line in text[:2000].splitlines():
        title = clean_title(line.lstrip("#").strip())
        if title:
            return title[:80]
    return ""


def clean_title(title: str | None) -> str:
    return " ".join(title.split())[:200] if title else ""
