"""Journal records: the JSON shape on disk and how one line is encoded and decoded."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TypeAlias

from .._errors import InputError
from .._json import JSON

__all__ = [
    "JSON",
    "SCHEMA_VERSION",
    "UNPAIRED_SURROGATE",
    "NewRecord",
    "Record",
    "StoredRecord",
    "check_storable",
    "decode_line",
    "encode_line",
    "encode_members",
    "encode_record",
    "storable",
    "unstorable",
]

Record: TypeAlias = dict[str, JSON]

#: Bumped when the meaning of a field changes; readers skip nothing on a newer version
#: but keep unknown fields, so an older reader never drops data it does not understand.
SCHEMA_VERSION = 1

_ENVELOPE = ("v", "seq", "ts", "kind", "id")
# One encoder for every line: json.dumps() with options builds a new encoder per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_string = json.encoder.encode_basestring  # what _ENCODER writes a str as (ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class NewRecord:
    """A record to append. Without ``id`` the writer assigns ``f"{id_prefix}{seq}"``.

    ``ts`` keeps a given timestamp (an import preserves the original's); default: now.
    """

    kind: str
    body: Record
    id: str | None = None
    id_prefix: str = ""
    ts: float | None = None
    #: ``body`` already encoded by :func:`encode_members` (the chunking workers do it, so
    #: the writer does not encode megabytes of text holding the GIL): written after the
    #: envelope as it is. ``body`` must still hold the same members (the result's record).
    encoded: bytes = b""


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record as it stands in a journal, with the byte range of its line."""

    offset: int
    end: int
    data: Record

    @property
    def seq(self) -> int:
        seq = self.data["seq"]
        assert isinstance(seq, int)
        return seq

    @property
    def kind(self) -> str:
        return str(self.data["kind"])

    @property
    def id(self) -> str:
        return str(self.data["id"])


def encode_record(record: NewRecord, *, seq: int, ts: float) -> tuple[Record, bytes]:
    """The full record (envelope first) and its journal line, newline included."""
    data: Record = {
        "v": SCHEMA_VERSION,
        "seq": seq,
        "ts": round(ts if record.ts is None else record.ts, 3),
        "kind": record.kind,
        "id": record.id if record.id is not None else f"{record.id_prefix}{seq}",
    }
    if record.encoded:
        # The envelope as _ENCODER writes it (floats by repr, strings by the same C
        # escaper), formatted directly: JSONEncoder.encode costs ~5 us for five keys.
        head = f'{{"v":{SCHEMA_VERSION},"seq":{seq},"ts":{data["ts"]!r},"kind":{_string(record.kind)},"id":{_string(str(data["id"]))},'
        line = b"".join((head.encode(), record.encoded, b"}\n"))
        data.update(record.body)
        return data, line
    for key, value in record.body.items():
        if key not in _ENVELOPE:
            data[key] = value
    return data, encode_line(data)


#: Why a string cannot be stored: UTF-8 has no form for it (JSON's "\ud800" escape reads as one, alone).
UNPAIRED_SURROGATE = "an unpaired surrogate (half of a UTF-16 pair, no character), which a journal cannot hold"


def storable(text: str) -> bool:
    """Whether ``text`` has a UTF-8 form, as every journal line must (an unpaired surrogate has none)."""
    if text.isascii():  # a flag of the string: no pass over it
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_storable(text: str, name: str) -> None:
    """:func:`unstorable` if ``text`` cannot be stored, before anything is written."""
    if not storable(text):
        raise unstorable(name)


def unstorable(name: str) -> InputError:
    """The InputError for a ``name`` that cannot be stored: the caller's mistake, said as one (the
    store's writer would refuse the record as an internal error and log a traceback for it)."""
    return InputError(
        f"{name} holds {UNPAIRED_SURROGATE}: send it as valid Unicode "
        "(a cut emoji or a lone escape such as \\ud83d leaves one)"
    )


def encode_members(body: Record) -> bytes:
    """The members of ``body`` as they stand in a journal line (no braces), for
    :attr:`NewRecord.encoded`; the keys must not be envelope names. UnicodeEncodeError
    for a lone surrogate (the writer then reports it as for any record)."""
    return _ENCODER.encode(body)[1:-1].encode("utf-8")


def encode_line(data: Record) -> bytes:
    """One record as its journal line, newline included."""
    return (_ENCODER.encode(data) + "\n").encode("utf-8")


def decode_line(line: bytes) -> Record | None:
    """The record on one complete line, or None when the line is malformed."""
    try:
        data = json.loads(line)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    if not isinstance(data.get("seq"), int) or not isinstance(data.get("kind"), str) or "id" not in data:
        return None
    return data
