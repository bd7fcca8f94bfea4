"""The file sandbox of doc_ingest: every refusal is specific, and nothing outside the roots is opened."""

from __future__ import annotations

import codecs
import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ctxtrio._errors import IngestError
from ctxtrio.docs.sandbox import check_text, decode_text, read_source

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

LIMIT = 10_000


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    (path / "ok.md").write_text("# Title\n\nhello\n", encoding="utf-8")
    return path


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A file outside the roots that must never be opened."""
    path = tmp_path / "secret.txt"
    path.write_text("canary secret\n")
    return path


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every path the sandbox passes to os.open, in order."""
    paths: list[str] = []
    real_open: Callable[..., int] = os.open

    def spy(path: str | os.PathLike[str], flags: int, *args: int, **kwargs: int) -> int:
        paths.append(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    yield paths


def refusal(file_path: str, roots: list[Path], limit: int = LIMIT) -> str:
    with pytest.raises(IngestError) as info:
        read_source(file_path, roots, max_bytes=limit)
    return str(info.value)


def test_relative_path_resolves_against_first_root(root: Path, tmp_path: Path) -> None:
    """A relative file_path is taken against the first root."""
    other = tmp_path / "other"
    other.mkdir()
    text, resolved = read_source("ok.md", [root, other], max_bytes=LIMIT)
    assert text == "# Title\n\nhello\n"
    assert resolved == (root / "ok.md").resolve()


def test_absolute_path_in_second_root(root: Path, tmp_path: Path) -> None:
    """An absolute path inside any root is read."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.txt").write_text("second root\n")
    assert read_source(str(other / "b.txt"), [root, other], max_bytes=LIMIT)[0] == "second root\n"


def test_no_roots_means_inline_only(root: Path) -> None:
    """Without --ingest-root, file ingest is refused and says to pass text."""
    assert "no --ingest-root" in refusal(str(root / "ok.md"), [])


def test_nul_in_path(root: Path) -> None:
    """A NUL byte in file_path is refused before any resolution."""
    assert "NUL byte" in refusal("ok.md\0.txt", [root])


def test_missing_file(root: Path, tmp_path: Path) -> None:
    """A path that does not exist says so; a relative one says where it was looked for (it said only "no such
    file: docs/missing.md", so a path written relative to the project, not to the root, was a riddle)."""
    assert refusal(str(root / "missing.md"), [root]) == f"no such file: {root / 'missing.md'}"
    other = tmp_path / "other"
    other.mkdir()
    assert refusal("docs/missing.md", [root, other]) == (
        f"no such file: docs/missing.md (a relative file_path is read under the first ingest root, {root})"
    )


def test_outside_by_dotdot(root: Path, canary: Path, opened: list[str]) -> None:
    """``..`` leading out of the root is refused and the target is never opened."""
    assert "outside the ingest roots" in refusal("../secret.txt", [root])
    assert opened == []


def test_outside_by_symlink(root: Path, canary: Path, opened: list[str]) -> None:
    """A symlink inside the root pointing outside is resolved first and refused unopened."""
    (root / "link.txt").symlink_to(canary)
    assert "outside the ingest roots" in refusal("link.txt", [root])
    assert opened == []


def test_symlinked_directory_outside(root: Path, tmp_path: Path, canary: Path, opened: list[str]) -> None:
    """A symlinked directory leading outside the root is refused unopened."""
    (root / "escape").symlink_to(tmp_path)
    assert "outside the ingest roots" in refusal("escape/secret.txt", [root])
    assert opened == []


def test_sibling_prefix_is_not_inside(root: Path, tmp_path: Path, opened: list[str]) -> None:
    """``/x/data-evil`` is not inside ``/x/data``: containment is by whole path segments."""
    evil = tmp_path / "data-evil"
    evil.mkdir()
    (evil / "x.txt").write_text("evil\n")
    assert "outside the ingest roots" in refusal(str(evil / "x.txt"), [root])
    assert opened == []


def test_symlink_inside_root_is_fine(root: Path) -> None:
    """A symlink that stays inside the root is followed and read."""
    (root / "alias.md").symlink_to(root / "ok.md")
    text, resolved = read_source("alias.md", [root], max_bytes=LIMIT)
    assert text.startswith("# Title") and resolved.name == "ok.md"


def test_directory(root: Path) -> None:
    """A directory is refused as not a file."""
    (root / "sub").mkdir()
    assert "is a directory, not a file" in refusal("sub", [root])


def test_a_directory_is_refused_naming_files_to_pass_instead(root: Path) -> None:
    """A directory's refusal says doc_ingest reads one file and names the first of its files by their whole
    paths (not hidden ones, not folders), and how a whole folder is ingested."""
    sub = root / "sub"
    sub.mkdir()
    for name in ("e.md", "c.md", "a.md", "d.md", "b.md", ".hidden.md"):
        (sub / name).write_text("text\n", encoding="utf-8")
    (sub / "inner").mkdir()
    assert refusal("sub", [root]) == (
        f"{sub} is a directory, not a file: doc_ingest reads one file a call; pass one of its files as "
        f"file_path ({sub / 'a.md'}, {sub / 'b.md'}, {sub / 'c.md'} and 2 more); a whole folder is ingested "
        "from a shell with ctxtrio ingest FOLDER"
    )
    (root / "empty").mkdir()
    assert refusal(str(root / "empty"), [root]) == (
        f"{root / 'empty'} is a directory, not a file: doc_ingest reads one file a call "
        "(a whole folder is ingested from a shell with ctxtrio ingest FOLDER)"
    )


def test_fifo_is_refused_without_blocking(root: Path) -> None:
    """A FIFO with no writer is refused at once (an ordinary open would block forever)."""
    os.mkfifo(root / "pipe")
    assert "FIFO" in refusal("pipe", [root])


def test_socket(root: Path) -> None:
    """A Unix socket is refused as not a regular file."""
    path = root / "s.sock"
    if len(os.fsencode(path)) > 100:
        pytest.skip("path too long for a Unix socket")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(os.fspath(path))
        assert refusal("s.sock", [root]).endswith("is a socket, not a regular file")


def test_device_is_refused_without_reading() -> None:
    """/dev/zero (inside a root of /dev) is refused as a device, not read forever."""
    assert "character device" in refusal("/dev/zero", [Path("/dev")])


def test_size_limit_before_reading(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file over the limit is refused from fstat, without a single read."""
    (root / "big.txt").write_bytes(b"x" * 101)

    def no_read(fd: int, size: int) -> bytes:
        raise AssertionError("read before the size check")

    monkeypatch.setattr(os, "read", no_read)
    message = refusal("big.txt", [root], limit=100)
    assert "101 bytes" in message and "limit is 100" in message


def test_binary_file(root: Path) -> None:
    """Bytes that are not UTF-8 are refused as binary."""
    (root / "blob.bin").write_bytes(bytes(range(256)))
    assert "binary or not UTF-8" in refusal("blob.bin", [root])


def test_text_with_nul_is_binary(root: Path) -> None:
    """Valid UTF-8 holding NUL characters is refused as binary."""
    (root / "nul.txt").write_bytes(b"abc\x00def")
    assert "NUL" in refusal("nul.txt", [root])


def test_unreadable_file(root: Path) -> None:
    """A file the server may not read says so."""
    if os.geteuid() == 0:
        pytest.skip("root reads everything")
    path = root / "locked.txt"
    path.write_text("x")
    path.chmod(0)
    assert "cannot open" in refusal("locked.txt", [root])


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("plain ütf-8".encode(), "plain ütf-8"),
        (codecs.BOM_UTF8 + "with bom".encode(), "with bom"),
        (codecs.BOM_UTF16_LE + "utf-16 le 한국어".encode("utf-16-le"), "utf-16 le 한국어"),
        (codecs.BOM_UTF16_BE + "utf-16 be 中文".encode("utf-16-be"), "utf-16 be 中文"),
    ],
)
def test_decodings(data: bytes, expected: str) -> None:
    """UTF-8 with or without BOM and UTF-16 with BOM decode; the BOM is dropped."""
    assert decode_text(data, "f") == expected


def test_utf16_without_bom_is_refused() -> None:
    """UTF-16 without a BOM is not guessed: it is refused as binary (it holds NULs)."""
    with pytest.raises(IngestError, match="binary"):
        decode_text("abc".encode("utf-16-le"), "f")


def test_check_text_cases() -> None:
    """Inline text: empty, whitespace-only, over the limit and NUL are each refused clearly."""
    with pytest.raises(IngestError, match="empty"):
        check_text(" \n\t", max_chars=10)
    with pytest.raises(IngestError, match="limit is 10"):
        check_text("x" * 11, max_chars=10)
    with pytest.raises(IngestError, match="NUL"):
        check_text("a\0b", max_chars=10)
    assert check_text("fine", max_chars=10) == "fine"


def test_hard_link_to_a_file_outside_is_refused(root: Path, canary: Path) -> None:
    """S1: a hard link inside the root to a file outside it is refused, and nothing of it is read."""
    os.link(canary, root / "linked.txt")
    message = refusal("linked.txt", [root])
    assert "hard links" in message and "canary" not in message


def test_existence_outside_the_roots_cannot_be_probed(root: Path, tmp_path: Path, canary: Path) -> None:
    """S2: outside the roots an existing and a missing path get the same refusal (paths aside)."""
    (root / "out").symlink_to(tmp_path)
    for existing, missing in (
        (str(canary), str(tmp_path / "nonexistent.txt")),
        ("/etc/passwd", "/etc/nonexistent"),
        ("out/secret.txt", "out/nonexistent.txt"),
        (
            str(tmp_path / "nonexistent-dir" / ".." / "secret.txt"),
            str(tmp_path / "nonexistent-dir" / ".." / "nope.txt"),
        ),
    ):
        shown = (refusal(existing, [root]), refusal(missing, [root]))
        assert shown[0].replace(existing, "P") == shown[1].replace(missing, "P"), shown
        assert "outside the ingest roots" in shown[0]


def test_a_file_name_that_is_not_utf8_is_refused_naming_it_with_escapes(root: Path) -> None:
    """A name with byte 0xff, named directly, through an in-root symlink, or as a lone surrogate: a clear refusal, UTF-8 only."""
    bad = os.path.join(os.fsencode(root), b"bad\xff.txt")
    with open(bad, "wb") as handle:
        handle.write(b"text\n")
    os.symlink(bad, os.fsencode(root / "link.txt"))
    direct = refusal(os.fsdecode(bad), [root])
    assert direct == f"file path {root}/bad\\xff.txt is not UTF-8: rename the file, or pass its content as text"
    linked = refusal(str(root / "link.txt"), [root])
    assert f"bad\\xff.txt (reached from {root}/link.txt) is not UTF-8" in linked
    assert "is not UTF-8" in refusal("odd\udc80.md", [root])
    for message in (direct, linked):
        message.encode("utf-8")  # can be stored and sent


def test_an_os_error_no_check_names_is_an_ingest_error(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A path swapped mid-check can fail a call no check wraps: a clear IngestError, not an internal error."""
    from ctxtrio.docs import sandbox

    def gone(fd: int, resolved: Path, root: Path) -> None:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(sandbox, "_check_opened", gone)
    assert "changed while it was checked (No such file or directory)" in refusal(str(root / "ok.md"), [root])
