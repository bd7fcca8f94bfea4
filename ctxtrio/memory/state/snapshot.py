"""Session snapshots: what replay computes, saved beside the journal so loading is not replay.

``sessions/<id>.snapshot`` holds a :class:`~ctxtrio.memory.state.columns.SessionState` as of
one journal offset: its columns and texts as flat binary sections (``array`` bytes,
UTF-8 buffers) after one JSON header line. Loading it costs a read and a few
``array.frombytes``; the journal lines after its offset are then replayed as usual,
exactly as the search index catches up. A snapshot is derived, never the truth:

* it is used only if its header names the journal as it is now: same (device, inode),
  an offset not past the journal's end, and the record it ends with is really there
  (same seq at the same offset); a checksum covers every section. Anything else
  (corrupt, stale, another format, a replaced journal) is ignored and rebuilt;
* it is read into memory, not mapped (a snapshot cut short under a mapping would
  fault), through :func:`~.derived.read_derived` (no symlink, a regular file, at most
  :func:`snapshot_limit` bytes for its journal's size), so what was checked is what
  is used, and damage to the file after loading cannot reach the state or the next
  snapshot written from it;
* it is written atomically (temporary file, rename; no fsync), by whichever process
  brought the session far enough past its last snapshot, so several processes may
  share the data dir: each snapshot is consistent with the journal prefix it names;
* deleting every snapshot loses nothing.

Compaction stays reversible: folds and supersessions are in the snapshot like the
rest. Blocking file I/O: call from a worker thread.
"""

from __future__ import annotations

import json
import sys
import zlib
from array import array
from typing import TYPE_CHECKING, Any, Final, TypeVar

from ...store.records import decode_line
from ...store.room import has_room
from .bm25 import TermIndex
from .columns import SessionState
from .derived import model_key, read_derived, replace_file

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from ...text.tokens import TokenModel

__all__ = ["SNAPSHOT_AFTER_BYTES", "load_snapshot", "snapshot_due", "snapshot_limit", "snapshot_path", "write_snapshot"]

V = TypeVar("V")

_VERSION: Final = 5  # 5: entry_line indents a text line that starts with "[" (the stored token counts)
_SUFFIX: Final = ".snapshot"
#: A snapshot is (re)written once the journal grew past the last one by an eighth of
#: its size, at least 64 KB and at most this: a load never replays more than this many
#: bytes of journal, and writing snapshots costs a few bytes per byte appended.
SNAPSHOT_AFTER_BYTES: Final = 512 * 1024
_SNAPSHOT_MIN_BYTES: Final = 64 * 1024


def snapshot_due(applied_offset: int, snapshot_offset: int, most: int = SNAPSHOT_AFTER_BYTES) -> bool:
    """Whether a state at ``applied_offset`` should be saved again (the last snapshot ends at ``snapshot_offset``)."""
    threshold = min(most, max(_SNAPSHOT_MIN_BYTES, applied_offset // 8))
    return applied_offset - snapshot_offset >= threshold


#: (attribute, array typecode or "bytes"/"bytearray") in file order.
_COLUMNS: Final = (
    ("seqs", "q"),
    ("times", "d"),
    ("tokens", "q"),
    ("lengths", "q"),
    ("hashes", "q"),
    ("blob_starts", "q"),
    ("roles", "bytearray"),
    ("pinned", "bytearray"),
    ("deleted_flags", "bytearray"),
    ("live", "bytearray"),
)
#: Sections: the columns, texts, vocabulary (UTF-8, starts, order), df, postings per term,
#: posting ordinals, posting tfs.
_SECTIONS: Final = len(_COLUMNS) + 8
_BLOB: Final = len(_COLUMNS)
_SCALARS: Final = (
    "title",
    "exists",
    "deleted_at",
    "created",
    "last_activity",
    "live_count",
    "live_tokens",
    "pinned_tokens",
    "superseded",
    "deleted",
    "summaries",
)


def snapshot_path(journal: Path) -> Path:
    """``sessions/<id>.snapshot`` beside ``sessions/<id>.jsonl``."""
    return journal.with_name(journal.name.removesuffix(".jsonl") + _SUFFIX)


def write_snapshot(journal: Path, state: SessionState, file_id: tuple[int, int]) -> bool:
    """Save ``state`` (which ends at ``state.applied_offset`` of ``journal``); False if not written.

    Not written unless the disk keeps :data:`~ctxtrio.store.room.ROOM_KEPT_BYTES` free after it: a
    snapshot is derived, and must not take the room the journals need (it is tried again at a later
    refresh). Its journal's size is a first guess of its own, so a full disk costs no packing."""
    if not has_room(journal.parent, state.applied_offset):
        return False
    _pack_texts(state)
    sections = _sections(state)
    header: dict[str, Any] = {
        "v": _VERSION,
        "session_id": state.session_id,
        "size": state.applied_offset,
        "file_id": list(file_id),
        "last": list(state.last_record),
        "model": model_key(state.model),
        "entries": len(state),
        "odd_ids": {str(o): item_id for o, item_id in state.odd_ids.items()},
        "seqs_ascend": state.seqs_ascend,
        "scalars": {name: getattr(state, name) for name in _SCALARS},
        "live_docs": state.index.live_docs,
        "live_length": state.index.live_length,
        "tags": {str(o): list(tags) for o, tags in state.tags.items()},
        "folds": {str(o): list(folds) for o, folds in state.folds.items()},
        "merges": {str(o): list(merged) for o, merged in state.merges.items()},
        "superseded_by": {str(o): by for o, by in state.superseded_by.items()},
        "sections": [len(section) for section in sections],
        "little": sys.byteorder == "little",
    }
    header["crc"] = _checksum(header, sections)
    head = json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n"
    if not has_room(journal.parent, len(head) + sum(memoryview(section).nbytes for section in sections)):
        return False
    return replace_file(snapshot_path(journal), [head, *sections])


def snapshot_limit(journal_size: int) -> int:
    """The most bytes a snapshot of a journal of ``journal_size`` bytes can hold.

    Texts are at most the journal's bytes; columns and the term index cost a few dozen
    bytes per entry, and every entry line costs more than that in the journal.
    """
    return 4 * journal_size + (1 << 20)


def _pack_texts(state: SessionState) -> None:
    """Move the texts kept as strings into the UTF-8 buffer."""
    if not state.tail_texts:
        return
    parts = [state.blob]
    starts = state.blob_starts
    position = starts[-1]
    for text in state.tail_texts:
        data = text.encode("utf-8", "surrogatepass")
        parts.append(data)
        position += len(data)
        starts.append(position)
    state.blob = b"".join(parts)
    state.tail_texts = []


def _sections(state: SessionState) -> list[bytes | memoryview]:  # in the order of _SECTIONS
    vocabulary, term_starts, term_order, df, counts, ordinals, tfs = state.index.dump()
    out: list[bytes | memoryview] = [
        bytes(getattr(state, name)) if kind == "bytearray" else getattr(state, name).tobytes()
        for name, kind in _COLUMNS
    ]
    out += [
        state.blob,
        vocabulary,
        term_starts.tobytes(),
        term_order.tobytes(),
        df.tobytes(),
        counts.tobytes(),
        ordinals.tobytes(),
        tfs.tobytes(),
    ]
    return out


def load_snapshot(
    journal: Path, session_id: str, model: TokenModel, file_id: tuple[int, int], size: int
) -> SessionState | None:
    """The state saved beside ``journal`` if it describes the journal as it is now, else None."""
    try:
        found = _read(snapshot_path(journal), snapshot_limit(size))
        if found is None:
            return None
        header, parts = found
        if not _matches(header, session_id, file_id, size, parts) or not _journal_agrees(journal, header):
            return None
        return _restore(header, parts, session_id, model)
    except (OSError, ValueError, TypeError, KeyError, IndexError, OverflowError, AssertionError):
        return None


def _read(path: Path, limit: int) -> tuple[dict[str, Any], list[memoryview]] | None:
    """A snapshot file's header and its sections (None: not a snapshot file, or too large for its journal)."""
    data = read_derived(path, limit)
    if data is None:
        return None
    newline = data.find(b"\n")
    header = json.loads(data[:newline]) if newline > 0 else None
    sizes = header.get("sections") if isinstance(header, dict) else None
    if (
        not isinstance(header, dict)
        or not isinstance(sizes, list)
        or not all(isinstance(n, int) and n >= 0 for n in sizes)
    ):
        return None
    view = memoryview(data)
    parts: list[memoryview] = []
    position = newline + 1
    for length in sizes:
        parts.append(view[position : position + length])
        position += length
    if position != len(data) or len(parts) != _SECTIONS:
        return None
    return header, parts


def _matches(
    header: dict[str, Any], session_id: str, file_id: tuple[int, int], size: int, parts: list[memoryview]
) -> bool:
    return (
        header.get("v") == _VERSION
        and header.get("session_id") == session_id
        and header.get("file_id") == list(file_id)
        and header.get("little") == (sys.byteorder == "little")
        and isinstance(header.get("size"), int)
        and 0 < header["size"] <= size
        and header.get("crc") == _checksum(header, parts)
    )


def _checksum(header: dict[str, Any], sections: Sequence[bytes | memoryview]) -> int:
    """CRC-32 of the header (without its ``crc``) and every section."""
    fields = {key: value for key, value in header.items() if key != "crc"}
    crc = zlib.crc32(json.dumps(fields, ensure_ascii=False).encode("utf-8"))
    for section in sections:
        crc = zlib.crc32(section, crc)
    return crc


def _journal_agrees(journal: Path, header: dict[str, object]) -> bool:
    """Whether the journal still holds, just before the snapshot's offset, the record it ended with."""
    last = header["last"]
    size = header["size"]
    assert isinstance(last, list) and isinstance(size, int)
    offset, seq = last
    if not isinstance(offset, int) or not 0 <= offset < size:
        return False
    with open(journal, "rb") as handle:
        handle.seek(offset)
        line = handle.read(size - offset)
    record = decode_line(line.rstrip(b"\n"))
    return record is not None and record.get("seq") == seq


def _restore(header: dict[str, Any], parts: list[memoryview], session_id: str, model: TokenModel) -> SessionState:
    state = SessionState(session_id, model)
    for (name, kind), data in zip(_COLUMNS, parts):
        if kind == "bytearray":
            setattr(state, name, bytearray(data))
        else:
            column = array(kind)
            column.frombytes(data)
            setattr(state, name, column)
    blob, vocabulary, starts_bytes, order_bytes, df_bytes, counts_bytes, ordinals_bytes, tfs_bytes = parts[_BLOB:]
    state.blob = bytes(blob)  # a copy: the rest of the file read can be freed
    count = header["entries"]
    assert isinstance(count, int)
    if not all(len(getattr(state, name)) == count for name, _ in _COLUMNS if name not in _STARTS):
        raise ValueError("snapshot columns disagree")
    if len(state.blob_starts) != count + 1:
        raise ValueError("snapshot offsets disagree")
    if state.blob_starts[-1] != len(blob):
        raise ValueError("snapshot offsets disagree")
    term_starts, term_order = array("q"), array("i")
    term_starts.frombytes(starts_bytes)
    term_order.frombytes(order_bytes)
    df, counts, ordinals, tfs = array("q"), array("q"), array("i"), array("H")
    df.frombytes(df_bytes)
    counts.frombytes(counts_bytes)
    ordinals.frombytes(ordinals_bytes)
    tfs.frombytes(tfs_bytes)
    if not len(term_starts) - 1 == len(term_order) == len(df) == len(counts) or term_starts[-1] != len(vocabulary):
        raise ValueError("snapshot vocabulary disagrees")
    if not sum(counts) == len(ordinals) == len(tfs):
        raise ValueError("snapshot index disagrees")
    live_docs, live_length = header["live_docs"], header["live_length"]
    assert isinstance(live_docs, int) and isinstance(live_length, int)
    state.index = TermIndex.load(
        (vocabulary, term_starts, term_order), df, counts, ordinals, tfs, live_docs, live_length
    )
    scalars = header["scalars"]
    assert isinstance(scalars, dict)
    for name in _SCALARS:
        setattr(state, name, scalars[name])
    state.tags = _sparse(header["tags"], lambda value: tuple(str(v) for v in value))
    state.folds = _sparse(header["folds"], lambda value: tuple(str(v) for v in value))
    state.merges = _sparse(header.get("merges", {}), lambda value: tuple(int(v) for v in value))  # none before
    state.merged_into = {merged: by for by, earlier in state.merges.items() for merged in earlier}
    state.superseded_by = _sparse(header["superseded_by"], int)
    state.odd_ids = _sparse(header["odd_ids"], str)
    state.odd_ordinals = {item_id: o for o, item_id in state.odd_ids.items()}
    state.seqs_ascend = header["seqs_ascend"] is True
    state.pin_set = {o: None for o in range(count) if state.pinned[o] and state.live[o]}
    size, last = header["size"], header["last"]
    assert isinstance(size, int) and isinstance(last, list)
    state.applied_offset = size
    state.last_record = (int(last[0]), int(last[1]))
    if header["model"] != model_key(model):
        state.retokenize(model, force=True)
    return state


#: Columns that do not hold one value per entry.
_STARTS: Final = frozenset({"blob_starts"})


def _sparse(data: object, convert: Callable[[Any], V]) -> dict[int, V]:
    if not isinstance(data, dict):
        raise ValueError("snapshot sparse column is not an object")
    return {int(key): convert(value) for key, value in data.items()}
