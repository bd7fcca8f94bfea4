"""Checks and defaults for the document tools' arguments (ranges, titles, file reads)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._errors import InputError
from .._limits import CHUNK_INDEX, called, check_range
from ..text.harmless import one_line
from ..text.plural import first_to_last
from .ingest import text_digest
from .sandbox import check_text, read_source

__all__ = ["FileRead", "check_start_end", "clean_title", "first_line", "past_the_end", "read_file"]


@dataclass(frozen=True, slots=True)
class FileRead:
    """A file as :func:`read_file` read it: its checked text, resolved path and text digest.

    ``roots`` and ``limit`` are the rules it was read under: the document service takes
    a read made by its caller (``ctxtrio ingest``'s precheck) instead of reading the file
    again only when they are its own.
    """

    text: str
    source: str
    digest: str
    roots: tuple[Path, ...]
    limit: int


def read_file(file_path: str, roots: tuple[Path, ...], limit: int) -> FileRead:
    """Read ``file_path`` under the sandbox (blocking): IngestError, or NotTextError to skip it."""
    text, resolved = read_source(file_path, roots, max_bytes=limit)
    text = check_text(text, max_chars=limit, name=str(resolved))
    # Hashed here, in the reading thread: the service and the CLI's unchanged check both need it.
    return FileRead(text, str(resolved), text_digest(text), roots, limit)


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


def past_the_end(start: int, total: int) -> InputError:
    """The refusal of a range starting at chunk ``start`` of a document of ``total`` chunks: it names the
    starts there are, as the caller calls them (``chunks/9-9`` of a one-chunk document named no next step)."""
    return InputError(
        f"the first chunk asked for, #{start}, is past the last chunk #{total - 1}: "
        f"pass {first_to_last(called('start'), total)}"
    )


def first_line(text: str) -> str:
    for line in text[:2000].splitlines():
        title = clean_title(line.lstrip("#").strip(), 80)
        if title:
            return title
    return ""


def clean_title(title: str | None, limit: int = 200) -> str:
    """A title as stored and shown: one harmless line (:func:`~ctxtrio.text.harmless.one_line`), at most ``limit``
    characters, never cut inside an escape.

    It is anyone's text (a ``title`` argument, a first heading), shown in tool answers,
    resources and the CLI's lines; made harmless here, where it is made, it is safe in all.
    """
    return one_line(title, limit) if title else ""
