"""Where chunks ``first`` .. ``first + count - 1`` sit in a generation file, without loading it.

A generation file holds one chunk record per line, in index order, with summary records
after them. Loading a 50 MB document to show a few of its chunks costs seconds; finding
their lines costs a binary search over byte offsets (each probe reads one line's head)
and one forward read. Only byte ranges come out: the lines are parsed by the store
(``StoreHandle.read_lines``), as search results are, and the caller checks that it got
exactly the chunks it asked for, falling back to loading the document otherwise.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["RANGE_MIN_BYTES", "chunk_spans"]

#: Files smaller than this are simply loaded (and then cached).
RANGE_MIN_BYTES = 4 << 20
#: The head of a chunk record as the journal writes it (``kind``, ``id``, ``index`` in that order).
_INDEX = re.compile(rb'"kind":"chunk","id":"[^"]{0,32}","index":(\d{1,9})[,}]')
_WINDOW = 64 << 10
_SCAN = 1 << 20


def chunk_spans(path: Path, first: int, count: int) -> list[tuple[int, int]]:
    """Byte ranges (start, end incl. the newline) of the lines of chunks ``first`` .. ``first + count - 1``.

    Blocking (call from a worker thread). Fewer ranges come back when the file ends
    first or a line does not look like a chunk record; the caller checks what it got.
    """
    with open(path, "rb") as handle:
        fd = handle.fileno()
        size = os.fstat(fd).st_size
        low, high = 0, size
        while high - low > _WINDOW:
            middle = (low + high) // 2
            index = _index_after(fd, middle, size)
            if index is None or index >= first:
                high = middle
            else:
                low = middle
        return _collect(fd, _line_start(fd, low), size, first, count)


def _line_start(fd: int, offset: int) -> int:
    """The start of the first line beginning at or after ``offset``."""
    if offset == 0:
        return 0
    position = offset - 1
    while True:
        block = os.pread(fd, _WINDOW, position)
        if not block:
            return position
        newline = block.find(b"\n")
        if newline >= 0:
            return position + newline + 1
        position += len(block)


def _index_after(fd: int, offset: int, size: int) -> int | None:
    """The index of the first chunk line starting at or after ``offset``; None past the last."""
    position = _line_start(fd, offset)
    while position < size:
        head = os.pread(fd, 256, position)
        match = _INDEX.search(head)
        if match is not None:
            return int(match.group(1))
        position = _line_start(fd, position + 1)
    return None


def _collect(fd: int, position: int, size: int, first: int, count: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    rest = b""
    while position < size and len(spans) < count:
        block = os.pread(fd, _SCAN, position + len(rest))
        if not block:
            break
        data = rest + block
        start = 0
        while len(spans) < count:
            newline = data.find(b"\n", start)
            if newline < 0:
                break
            match = _INDEX.search(data, start, min(newline, start + 256))
            if match is not None:
                index = int(match.group(1))
                if index >= first + count:
                    return spans
                if index >= first:
                    spans.append((position + start, position + newline + 1))
            start = newline + 1
        position += start
        rest = data[start:]
    return spans
