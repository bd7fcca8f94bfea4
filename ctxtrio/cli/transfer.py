"""``export`` and ``import``: sessions as a portable JSONL file.

The file's first line is a header, ``{"ctxtrio_export": 1, "exported_at": ..., "sessions": N}``;
every other line is ``{"session": ID, "record": {...}}``, one journal record as stored,
in journal order, so nothing is lost (see :mod:`ctxtrio.memory.admin.archive`). Written to
a temporary file and renamed, so an interrupted export leaves no half file. Only ``\n``
ends a line: the other characters some readers take for line ends (U+0085, U+2028,
U+2029) are written escaped, and the reader splits on ``\n`` alone.

An import stores each session whole or not at all, even across ``kill -9`` (see
:meth:`ctxtrio.store.handle.StoreHandle.install`), so running the same import again
stores only what is missing, and never writes over a session that holds other content:
it says which ids it passed over and why.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from .._errors import InputError
from ..store.journal_files import fsync_dir
from ..text.plural import plural
from .library import open_library
from .output import emit_json, err, flush_output, say, write_out
from .progress import Progress

if TYPE_CHECKING:
    import argparse

    from .._config import Config
    from ..memory import ImportResult
    from ..store.records import Record

__all__ = [
    "FORMAT_VERSION",
    "export_args",
    "export_line",
    "export_command",
    "import_args",
    "import_command",
    "read_export",
]

FORMAT_VERSION = 1


def export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("sessions", metavar="SESSION", nargs="*", help="session ids to export (or --all)")
    p.add_argument("--all", action="store_true", help="every session (not deleted ones unless --deleted)")
    p.add_argument("--deleted", action="store_true", help="with --all: deleted sessions too")
    p.add_argument("-o", "--output", metavar="FILE", default="-", help="where to write (default: stdout)")


def import_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="an export (- for stdin)")
    p.add_argument("-v", "--verbose", action="store_true", help="without a terminal, a progress line per session")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


async def export_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    if bool(args.sessions) == bool(args.all):
        both = ", not both" if args.all else ""  # 'export s1 --all' was told to do one of what it did both of
        raise InputError(f"name the sessions to export, or pass --all{both}")
    async with open_library(config, stop, read_only=args.read_only) as ctx:
        if args.all:
            ids = [info.session_id for info in await ctx.sessions.list_sessions(include_deleted=args.deleted)]
        else:
            ids = list(dict.fromkeys(args.sessions))
        exported = [(session_id, await ctx.sessions.records(session_id)) for session_id in ids]
    lines = [json.dumps({"ctxtrio_export": FORMAT_VERSION, "exported_at": round(time.time(), 3), "sessions": len(ids)})]
    for session_id, records in exported:
        lines.extend(export_line(session_id, record) for record in records)
    payload = "\n".join(lines) + "\n"
    count = sum(len(records) for _, records in exported)
    if args.output == "-":
        write_out(payload)
        flush_output()
    else:
        await trio.to_thread.run_sync(_write_atomically, Path(args.output), payload)
    err(
        f"exported {plural(len(ids), 'session')}, {plural(count, 'record')}"
        + ("" if args.output == "-" else f" to {args.output}")
    )
    return 0


#: Characters str.splitlines() and some editors end lines at, which JSON leaves raw.
_LINE_ENDS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def export_line(session_id: str, record: Record) -> str:
    """One line of an export (no newline): JSON whose only line end can be the one after it.

    The escapes are JSON's own, and these characters can only stand inside JSON strings,
    so the line still parses to the same record.
    """
    return json.dumps({"session": session_id, "record": record}, ensure_ascii=False).translate(_LINE_ENDS)


def _write_atomically(path: Path, payload: str) -> None:
    """Write ``payload`` as ``path`` whole or not at all, durably: the file and then its new name are
    fsynced, so an export a ``prune`` or ``delete`` follows cannot vanish in a crash after they are durable.

    The file is created 0600, as private as the data dir (0700) whose notes it holds: open(path, "w") made it
    0644 under the usual umask. mkstemp creates a new file of a random name (O_EXCL, O_NOFOLLOW), so a symlink
    planted at the temporary's name is not written through, as the old ``.NAME.partial-PID`` was; one planted
    at ``path`` is replaced by the rename (rename(2) does not follow it), not written through."""
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.partial-", dir=path.parent)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    temporary = Path(name)
    try:
        with open(fd, "w", encoding="utf-8") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        fsync_dir(path.parent)  # (the rename is in the folder's data: without this a crash may undo it)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from exc


def read_export(text: str, name: str) -> dict[str, list[Record]]:
    """Records by session, in file order; InputError naming the line when the file is not an export."""
    sessions: dict[str, list[Record]] = {}
    if not text.strip():  # ("its first line is not a version 1 header" said of nothing at all)
        raise InputError(f"{name} is empty: give an export ('ctxtrio export' writes one)")
    lines = text.split("\n")  # only \n ends a line (see export_line)
    try:
        header = json.loads(lines[0]) if lines else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("ctxtrio_export") != FORMAT_VERSION:
        raise InputError(f"{name} is not a ctxtrio export (its first line is not a version {FORMAT_VERSION} header)")
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{name} line {number} is not JSON: {exc}") from exc
        record = item.get("record") if isinstance(item, dict) else None
        session_id = item.get("session") if isinstance(item, dict) else None
        if not isinstance(session_id, str) or not isinstance(record, dict) or "kind" not in record:
            raise InputError(f"{name} line {number} is not a session record")
        sessions.setdefault(session_id, []).append(record)
    return sessions


async def import_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    name = "stdin" if args.file == "-" else args.file
    try:
        raw = sys.stdin.buffer.read() if args.file == "-" else await trio.to_thread.run_sync(Path(args.file).read_bytes)
        text = raw.decode("utf-8")
    except OSError as exc:  # as export says it: the reason once, not "[Errno 2] ...: 'PATH'" after the path
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name} is not UTF-8 text (byte {exc.start}): give an export ('ctxtrio export' writes one)"
        ) from exc
    sessions = read_export(text, name)
    total = sum(len(records) for records in sessions.values())
    results: list[ImportResult] = []
    started = trio.current_time()
    async with open_library(config, stop) as ctx:
        # As ingest: a bar on a terminal; without one (a log, a pipe) no line per session unless --verbose,
        # since each session's outcome is said below anyway, and the closing line counts them.
        with Progress("import", total=total, unit="records", items=len(sessions), quiet=not args.verbose) as progress:
            for session_id, records in sessions.items():
                result = await ctx.sessions.import_session(session_id, records)
                results.append(result)
                progress.advance(len(records), f"{session_id}: {result.outcome}")
    if args.json:
        emit_json(
            [
                {
                    "source_id": r.source_id,
                    "session_id": r.session_id,
                    "outcome": r.outcome,
                    "records": r.records,
                    "ids": r.ids,
                    "remapped_entries": r.remapped_entries,
                    "skipped": list(r.skipped),
                }
                for r in results
            ]
        )
        return 0
    for r in results:
        where = "" if r.session_id == r.source_id else f" as {r.session_id}"
        for note in r.skipped:
            say(f"{r.source_id}: passed over {note}")
        if r.outcome == "imported":
            detail = f"{plural(r.records, 'record')}, ids {r.ids}"
            if r.remapped_entries:
                detail += f" ({r.remapped_entries} entry ids changed)"
            say(f"{r.source_id}: imported{where} ({detail})")
        elif r.outcome == "restored":
            say(f"{r.source_id}: already stored{where} but deleted: restored")
        else:
            say(f"{r.source_id}: unchanged (already stored{where})")
    outcomes = Counter(r.outcome for r in results)
    say(
        f"done: {outcomes['imported']} imported, {outcomes['restored']} restored, {outcomes['unchanged']} unchanged; "
        f"{plural(total, 'record')} in {trio.current_time() - started:.2f} s"
    )
    return 0
