"""Chunks on disk: building the records of one ingest, and loading a generation back.

A generation file ``docs/<doc>/<gen>.jsonl`` holds one ``chunk`` record per chunk
(``index``, ``text``, ``start``, ``end``, ``trail``, ``tokens``; indexed by the store
under item ``str(index)``), then, appended later, ``summary`` records (``key``,
``text``) that cache LLM summaries of its chunks and ranges.

Pure and blocking: :class:`ChunkBatcher` and :func:`load_generation` run in worker
threads. The batcher does all the CPU work of an ingest (chunking, search terms, the
record bodies) so the store writer only writes and the event loop stays free.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..store.records import NewRecord, Record, encode_members
from ..store.rows import IndexRow
from ..text.chunking import Chunk, iter_chunks
from ..text.kinds import Kind
from ..text.terms import index_text

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from ..store.handle import StoreHandle
    from ..text.tokens import TokenModel

__all__ = [
    "Batch",
    "ChunkBatcher",
    "LoadedDoc",
    "StoredChunk",
    "chunk_body",
    "chunk_on_line",
    "chunk_record",
    "chunk_rows",
    "encoded_body",
    "heading_terms",
    "load_generation",
    "summary_record",
]


def chunk_rows(record: Record) -> list[IndexRow]:
    """What a generation-file record contributes to the search index: a chunk's text and its
    heading trail (:func:`heading_terms`), keyed by its index; nothing for other kinds. The
    store indexes with this (see _wiring.py)."""
    text, trail = record.get("text"), record.get("trail")
    if record.get("kind") != "chunk" or not isinstance(text, str):
        return []
    headings = tuple(str(title) for title in trail) if isinstance(trail, list) else ()
    return [IndexRow("chunks", str(record.get("index")), index_text(text), heading_terms(headings))]


@functools.lru_cache(maxsize=1024)
def heading_terms(trail: tuple[str, ...]) -> str:
    """The index text of a chunk's heading trail (``os — Miscellaneous ... > function
    makedirs``): searchable beside the text, so a chunk under ``class Event > method set``
    that holds ``wait`` is found for ``threading.Event.wait``. Cached: the chunks of a
    section share their trail."""
    return index_text("\n".join(trail))


#: A chunk as kept in memory for reading is the chunker's own value object.
StoredChunk = Chunk


@dataclass(frozen=True, slots=True)
class Batch:
    """Consecutive chunks ready to append: records and their precomputed index rows."""

    chunks: list[StoredChunk]
    records: list[NewRecord]
    rows: list[list[IndexRow]]
    #: Characters of the source covered so far (for progress).
    done_chars: int


class ChunkBatcher:
    """Cuts a text into chunks lazily, ``batch_size`` at a time.

    Not thread-safe, but may move between threads: call :meth:`next_batch` from one
    worker thread at a time.
    """

    def __init__(
        self,
        text: str,
        *,
        chunk_tokens: int,
        overlap_tokens: int,
        model: TokenModel,
        batch_size: int,
        kind: Kind = Kind.MARKDOWN,
    ) -> None:
        self._chunks: Iterator[Chunk] = iter_chunks(
            text, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens, model=model, kind=kind
        )
        self._batch_size = batch_size

    def next_batch(self) -> Batch | None:
        """The next batch, or None when the text is used up."""
        chunks: list[StoredChunk] = []
        records: list[NewRecord] = []
        rows: list[list[IndexRow]] = []
        for chunk in self._chunks:  # a StoredChunk is the chunker's Chunk: kept as it is
            chunks.append(chunk)
            records.append(chunk_record(chunk))
            rows.append([IndexRow("chunks", str(chunk.index), index_text(chunk.text), heading_terms(chunk.trail))])
            if len(chunks) >= self._batch_size:
                break
        if not chunks:
            return None
        return Batch(chunks, records, rows, chunks[-1].end)


@dataclass(slots=True)
class LoadedDoc:
    """A generation in memory: its chunks in index order and its cached summaries.

    ``end`` is how far into the generation file it has been read, so later summary
    records (this or another process) can be picked up with :func:`load_generation`.
    """

    doc_id: str
    gen: str
    chunks: list[StoredChunk]
    summaries: dict[str, str] = field(default_factory=dict)
    end: int = 0

    @property
    def size(self) -> int:
        """Characters held, for the memory bound of the cache of loaded documents."""
        return sum(len(chunk.text) for chunk in self.chunks)


def load_generation(store: StoreHandle, path: Path, *, start: int = 0) -> tuple[list[StoredChunk], dict[str, str], int]:
    """Chunks (sorted by index) and summaries of a generation file from ``start``, and its end."""
    result = store.blocking.read(path, start)
    chunks: list[StoredChunk] = []
    summaries: dict[str, str] = {}
    for stored in result.records:
        data = stored.data
        kind = data.get("kind")
        if kind == "chunk":
            chunk = _chunk(data)
            if chunk is not None:
                chunks.append(chunk)
        elif kind == "summary":
            key, text = data.get("key"), data.get("text")
            if isinstance(key, str) and isinstance(text, str):
                summaries[key] = text
    chunks.sort(key=lambda chunk: chunk.index)
    return chunks, summaries, result.end


def chunk_on_line(record: Record | None) -> StoredChunk | None:
    """The chunk a journal line holds (from ``StoreHandle.read_lines``), or None if it holds none."""
    return _chunk(record) if record is not None and record.get("kind") == "chunk" else None


def _chunk(data: Record) -> StoredChunk | None:
    index, text, start, end = data.get("index"), data.get("text"), data.get("start"), data.get("end")
    trail, tokens = data.get("trail"), data.get("tokens")
    if not (isinstance(index, int) and isinstance(text, str) and isinstance(start, int) and isinstance(end, int)):
        return None
    if not isinstance(tokens, int) or not isinstance(trail, list):
        return None
    return StoredChunk(index, text, start, end, tuple(str(title) for title in trail), tokens)


def chunk_body(chunk: StoredChunk) -> Record:
    """The body of a chunk's journal record: what :func:`chunk_record` stores and the
    chunking worker pre-encodes (one definition, so the two cannot drift apart)."""
    return {
        "index": chunk.index,
        "text": chunk.text,
        "start": chunk.start,
        "end": chunk.end,
        "trail": list(chunk.trail),
        "tokens": chunk.tokens,
    }


def encoded_body(chunk: StoredChunk) -> bytes | None:
    """:func:`chunk_body` encoded as the journal line's members, or None when the text
    cannot be (a lone surrogate: the writer then encodes, and refuses, the record)."""
    try:
        return encode_members(chunk_body(chunk))
    except UnicodeEncodeError:
        return None


def chunk_record(chunk: StoredChunk, *, encoded: bytes = b"") -> NewRecord:
    """The journal record of one chunk (the store indexes ``text`` under ``str(index)``);
    ``encoded``: its body as the chunking worker encoded it, if it did."""
    return NewRecord("chunk", chunk_body(chunk), id=f"c{chunk.index}", encoded=encoded)


def summary_record(key: str, text: str) -> NewRecord:
    return NewRecord("summary", {"key": key, "text": text}, id_prefix="s")
