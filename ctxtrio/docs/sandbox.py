"""Reading a file to ingest, only from inside the ``--ingest-root`` directories.

The order of checks is the security argument; nothing is opened before the path is
known to be inside a root:

1. No roots configured → refused (inline text only). A NUL byte in the path → refused.
   A path that is not UTF-8 (a lone surrogate sent by a client, or a file name with a
   byte that is not UTF-8, also one reached through a symlink) → refused, naming the
   path with its bytes escaped (``bad\xff.txt``): journals and answers are UTF-8, and
   such a name could be neither stored nor shown.
2. A relative path is taken against the first root. It is resolved with every
   symlink that exists followed, and without asking whether the rest exists
   (``os.path.realpath``), and so are the roots; the result must lie inside a root by
   whole path segments (``/data-evil`` is not in ``/data``). Only then is it resolved
   strictly, so outside the roots ``/etc/shadow`` and ``/etc/nonexistent`` get the same
   answer: no path's existence can be probed. The strict result is checked again.
3. ``stat`` must say regular file, no larger than the limit, with one link:
   directories (naming a few of their files, which a caller may pass instead), FIFOs,
   sockets and devices are refused here, and so are files with
   several hard links. A hard link has no "real" name: every name of the file is equal,
   and nothing short of scanning the whole filesystem finds the others, so a link made
   inside a root to a file outside it would pass every path check. Comparing device
   and inode with the roots' proves nothing either (a hard link always lives on the
   same filesystem as its target). A file with ``st_nlink > 1`` is therefore refused;
   the message says to copy it into the root instead. Then the resolved path is opened with
   ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO swapped in would block an ordinary open; a
   symlink swapped in fails) and the *opened* descriptor is checked again: it must
   still resolve inside the root (``/proc/self/fd``, where present) and ``fstat`` must
   agree. Nothing is read before these checks pass.
4. Only then is it read, and decoded: UTF-8 with or without BOM, or UTF-16 with a BOM.
   Undecodable bytes, or text containing NUL, are refused as binary.

Everything here blocks; call it through ``trio.to_thread``. Every refusal is an
:class:`~ctxtrio._errors.IngestError` whose message names the case.
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import IngestError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["NotTextError", "check_text", "decode_text", "escaped_path", "read_source", "resolve_in_roots"]

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_BINARY = "is binary or not UTF-8 text (accepted: UTF-8 with or without BOM, UTF-16 with BOM)"
#: Bytes looked at to tell binary data (NUL bytes) from text in another encoding.
_SNIFF_BYTES = 8192


class NotTextError(IngestError):
    """The content is not text to ingest: ``reason`` is ``"binary"``, ``"not UTF-8"`` or ``"empty"``.

    Nothing is wrong with the path: a folder walk counts these instead of naming each.
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def read_source(file_path: str, roots: Sequence[Path], *, max_bytes: int) -> tuple[str, Path]:
    """Return the decoded text of ``file_path`` and its resolved path, or raise IngestError.

    A file system changing under the checks (a path swapped between two of them) can
    make any step fail in a way no check names: that is an IngestError too, never an
    internal error.
    """
    try:
        resolved, root = resolve_in_roots(file_path, roots)
        return _read_checked(resolved, root, max_bytes), resolved
    except OSError as exc:
        raise IngestError(
            f"cannot read {escaped_path(file_path)}: it changed while it was checked ({exc.strerror or exc}); try again"
        ) from exc


def resolve_in_roots(file_path: str, roots: Sequence[Path]) -> tuple[Path, Path]:
    """The fully resolved path and the root it lies in; nothing is opened."""
    if not roots:
        raise IngestError("file ingest is off: this server has no --ingest-root; pass the content as text")
    if "\0" in file_path:
        raise IngestError("file_path contains a NUL byte")
    if not file_path.strip():
        raise IngestError("file_path is empty")
    _refuse_non_utf8(file_path)
    real_roots = [_resolve_root(root) for root in roots]
    candidate = Path(file_path)
    relative = not candidate.is_absolute()
    if relative:
        candidate = real_roots[0] / candidate
    # Containment first, decided without learning whether the path exists.
    _root_of(Path(os.path.realpath(candidate)), real_roots, file_path)
    try:
        resolved = candidate.resolve(strict=True)
    except FileNotFoundError as exc:
        where = f" (a relative file_path is read under the first ingest root, {real_roots[0]})" if relative else ""
        raise IngestError(f"no such file: {file_path}{where}") from exc
    except RuntimeError as exc:  # a symlink loop (Python < 3.13)
        raise IngestError(f"cannot resolve {file_path}: symlink loop") from exc
    except OSError as exc:
        raise IngestError(f"cannot resolve {file_path}: {exc.strerror or exc}") from exc
    root = _root_of(resolved, real_roots, file_path)  # a symlink may have changed meanwhile
    _refuse_non_utf8(str(resolved), file_path)
    return resolved, root


def escaped_path(path: str) -> str:
    """``path`` as UTF-8 text: bytes that are not UTF-8 (surrogate escapes) shown as ``\xff``."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return (
            os.fsencode(path).decode("utf-8", "backslashreplace")
            if _escapable(path)
            else path.encode("utf-8", "backslashreplace").decode("utf-8")
        )


def _escapable(path: str) -> bool:
    try:
        os.fsencode(path)
        return True
    except UnicodeEncodeError:
        return False


def _refuse_non_utf8(path: str, named: str | None = None) -> None:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        via = f" (reached from {escaped_path(named)})" if named is not None and named != path else ""
        raise IngestError(
            f"file path {escaped_path(path)}{via} is not UTF-8: rename the file, or pass its content as text"
        ) from None


def _root_of(resolved: Path, real_roots: list[Path], file_path: str) -> Path:
    """The root ``resolved`` lies in, or the one refusal every path outside gets."""
    for root in real_roots:
        if resolved.is_relative_to(root):
            return root
    shown = ", ".join(str(root) for root in real_roots)
    raise IngestError(f"{file_path} is outside the ingest roots ({shown}); symlinks are followed before checking")


def _resolve_root(root: Path) -> Path:
    try:
        return root.resolve(strict=True)
    except OSError as exc:
        raise IngestError(f"ingest root {root} is not usable: {exc.strerror or exc}") from exc


def _read_checked(resolved: Path, root: Path, max_bytes: int) -> str:
    try:
        _check_kind(os.stat(resolved), resolved, max_bytes)  # sockets cannot even be opened
    except OSError as exc:
        raise IngestError(f"cannot inspect {resolved}: {exc.strerror or exc}") from exc
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(resolved, flags)
    except OSError as exc:
        raise IngestError(f"cannot open {resolved}: {exc.strerror or exc}") from exc
    try:
        _check_opened(fd, resolved, root)
        _check_kind(os.fstat(fd), resolved, max_bytes)  # what was opened, not what was named
        data = _read_all(fd, resolved, max_bytes)
    finally:
        os.close(fd)
    return decode_text(data, str(resolved))


def _check_kind(info: os.stat_result, resolved: Path, max_bytes: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise IngestError(_directory_refusal(resolved))
    for test, kind in _KINDS:
        if test(info.st_mode):
            raise IngestError(f"{resolved} is {kind}, not a regular file")
    if not stat.S_ISREG(info.st_mode):
        raise IngestError(f"{resolved} is not a regular file")
    if info.st_nlink > 1:
        raise IngestError(
            f"{resolved} has {info.st_nlink} hard links, and a hard link may be another name of a file "
            "outside the ingest roots; copy the file into the root to ingest it"
        )
    if info.st_size > max_bytes:
        raise IngestError(f"{resolved} is {info.st_size:,} bytes; the limit is {max_bytes:,} (--max-ingest-chars)")


#: Files a directory's refusal names; the rest are counted.
_NAMED_FILES = 3
#: Entries of a directory looked at for its refusal: a huge folder is not listed whole.
_LISTED_ENTRIES = 10_000


def _directory_refusal(directory: Path) -> str:
    """What to pass instead of ``directory`` (inside a root: its names may be told): a model
    given a folder calls again with a folder unless told which files to name."""
    names: list[str] = []
    try:
        with os.scandir(directory) as entries:
            for count, entry in enumerate(entries):
                if count >= _LISTED_ENTRIES:
                    break
                if not entry.name.startswith(".") and entry.is_file(follow_symlinks=False):
                    names.append(escaped_path(entry.path))  # whole: a bare name is read under the first root
    except OSError:
        pass  # unreadable: the refusal still says what doc_ingest takes
    folder = "a whole folder is ingested from a shell with ctxtrio ingest FOLDER"
    if not names:
        return f"{directory} is a directory, not a file: doc_ingest reads one file a call ({folder})"
    names.sort()
    shown = ", ".join(names[:_NAMED_FILES])
    if len(names) > _NAMED_FILES:
        shown += f" and {len(names) - _NAMED_FILES} more"
    return (
        f"{directory} is a directory, not a file: doc_ingest reads one file a call; pass one of its files "
        f"as file_path ({shown}); {folder}"
    )


def _check_opened(fd: int, resolved: Path, root: Path) -> None:
    """Re-check containment on what was actually opened (a directory may have been swapped)."""
    proc = f"/proc/self/fd/{fd}"
    try:
        opened = Path(os.readlink(proc))
    except OSError:
        return  # no /proc: the checks before the open stand alone
    if not opened.is_relative_to(root):
        raise IngestError(f"{resolved} changed while it was opened and now lies outside the ingest roots")


def _read_all(fd: int, resolved: Path, max_bytes: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    try:
        while True:
            part = os.read(fd, 1 << 20)
            if not part:
                break
            size += len(part)
            if size > max_bytes:
                raise IngestError(f"{resolved} grew past the limit of {max_bytes:,} bytes while it was read")
            parts.append(part)
    except OSError as exc:
        raise IngestError(f"cannot read {resolved}: {exc.strerror or exc}") from exc
    return b"".join(parts)


def decode_text(data: bytes, name: str) -> str:
    """Decode file bytes: UTF-8 (BOM optional) or UTF-16 with BOM; else IngestError."""
    try:
        if data.startswith(codecs.BOM_UTF8):
            text = data[len(codecs.BOM_UTF8) :].decode("utf-8")
        elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            text = data.decode("utf-16")
        else:
            text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotTextError(f"{name} {_BINARY}", "binary" if b"\0" in data[:_SNIFF_BYTES] else "not UTF-8") from exc
    if "\0" in text:
        raise NotTextError(f"{name} {_BINARY}: it contains NUL characters", "binary")
    return text


def check_text(text: str, *, max_chars: int, name: str = "text") -> str:
    """Refuse empty text, text over ``max_chars`` characters and text containing NUL."""
    if len(text) > max_chars:
        raise IngestError(f"{name} is {len(text):,} characters; the limit is {max_chars:,} (--max-ingest-chars)")
    if not text or text.isspace():
        raise NotTextError(f"{name} is empty: nothing to ingest", "empty")
    if "\0" in text:
        raise NotTextError(f"{name} contains NUL characters: binary data cannot be ingested", "binary")
    return text
