"""``ctxtrio ingest PATH...``: files, folders and globs into the document store, the way a person expects.

A real folder holds more than text: compiled files, libraries, empty ``__init__.py``.
Those are *skipped* and counted by reason (binary, not UTF-8, empty, symlinked
directory, symlink to a file already listed) in the one summary line; ``--verbose``
lists them. What is *refused* for safety or because it cannot be read (a symlink out of
the root, a FIFO or device, a file over the limit, a name that is not UTF-8) is named,
one line each on stderr, as it happens. Exit 0 unless an argument itself found nothing (a path
that does not exist, a glob that matches nothing, a file named as an argument and refused) or a
file failed to store (then 1); 130 when interrupted, with the true counts so far.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from .._errors import IngestError, StoreError
from .._locks import CharBudget
from ..docs.arguments import FileRead, read_file
from ..docs.model import IngestResult
from ..docs.sandbox import NotTextError, escaped_path
from .collector import bulk_collection
from .library import open_library
from .output import emit_json, err, say
from .progress import Progress
from .walk import find_files

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

    from .._config import Config
    from .._wiring import Wiring
    from ..docs.model import DocumentInfo

__all__ = ["add_arguments", "ingest_command"]

#: Batches read and ingested at once (the document service admits 16). The store writer commits what
#: is queued as one round, so more files in flight share each round's fixed costs (its worker-thread
#: call, the catalog's and docs/'s fsyncs, the hand-offs to the fsync threads): 8 where 4 gave
#: small-file trees about a tenth less CPU (postgresql-doc as text 2.46 -> 2.23 CPU-s). 16 gained a
#: few percent more at most, inside this machine's noise.
PARALLEL_FILES = 8
#: Files read and hashed per worker-thread call, settled in turn (a hop per small file would cost more
#: than its read); a batch ends before PRECHECK_BYTES too, so big files are batches of their own and
#: run side by side (a folder of up to 32 files was one batch: one file at a time).
PRECHECK_FILES = 32
PRECHECK_BYTES = 2_000_000
#: Characters of read text a batch keeps for the ingest (the first file's whatever its size): a file
#: past them (one that grew since the walk) is read again by the document service.
PRECHECK_KEEP_CHARS = 2_000_000
#: Bytes of the batches in flight, from their read to their last file's commit: what is read and not
#: yet stored stays under this, or one batch alone when larger (a file can be max_ingest_chars, 20M
#: by default). A file in flight costs the process about 7-11 times its size at its peak (its text,
#: chunks, records and index rows; and as much in a chunking process while chunked), so many small
#: files keep PARALLEL_FILES batches going and a few big ones run a few at a time.
IN_FLIGHT_BYTES = 16_000_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", metavar="PATH", nargs="+", help="files, directories (walked) or globs ('docs/**/*.md')")
    p.add_argument(
        "--exclude",
        metavar="GLOB",
        action="append",
        default=[],
        help="leave out what matches, like a .gitignore line ('tests/', '*.min.js'); repeatable",
    )
    p.add_argument(
        "--include",
        metavar="GLOB",
        action="append",
        default=[],
        help="in walked folders take only files that match ('*.md'); repeatable",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="one line per file, skipped ones too")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


@dataclass(frozen=True, slots=True)
class Checked:
    """A file after reading: its resolved source and text hash (and text, when kept), or why it is
    skipped or refused."""

    path: Path
    size: int
    source: str | None = None
    digest: str | None = None
    skip: str | None = None
    refusal: str | None = None
    #: The read itself, for the ingest: the file is then stored as it was read and checked here (one
    #: snapshot decides "unchanged" and is stored), not read again. None past PRECHECK_KEEP_CHARS.
    read: FileRead | None = None


def precheck_batches(files: list[tuple[Path, int]]) -> list[list[tuple[Path, int]]]:
    """``files`` in order, cut into batches of PRECHECK_FILES files or PRECHECK_BYTES bytes, whichever
    comes first (a file past those bytes is a batch of its own)."""
    batches: list[list[tuple[Path, int]]] = []
    batch: list[tuple[Path, int]] = []
    held = 0
    for path, size in files:
        if batch and (len(batch) == PRECHECK_FILES or held + size > PRECHECK_BYTES):
            batches.append(batch)
            batch, held = [], 0
        batch.append((path, size))
        held += size
    if batch:
        batches.append(batch)
    return batches


def precheck(batch: list[tuple[Path, int]], roots: tuple[Path, ...], limit: int) -> list[Checked]:
    """Each file read under the sandbox's rules (blocking): what it is, before the service sees it.

    The same read as the service's own (:func:`~ctxtrio.docs.arguments.read_file`, the same roots
    and limit), so the service takes it as it is.
    """
    checked: list[Checked] = []
    kept = 0
    for path, size in batch:
        try:
            read = read_file(str(path), roots, limit)
        except NotTextError as exc:
            checked.append(Checked(path, size, skip=exc.reason))
            continue
        except IngestError as exc:
            checked.append(Checked(path, size, refusal=str(exc)))
            continue
        keep = not kept or kept + len(read.text) <= PRECHECK_KEEP_CHARS
        kept += len(read.text) if keep else 0
        checked.append(Checked(path, size, read.source, read.digest, read=read if keep else None))
    return checked


@dataclass(slots=True)
class Tally:
    """What happened so far: the summary line is built from this, also after Ctrl-C."""

    done: list[tuple[Path, IngestResult]] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    failed: bool = False
    processed_bytes: int = 0


class _Run:
    """One ``ctxtrio ingest``: the workers' shared tally and progress over one library."""

    def __init__(self, ctx: Wiring, config: Config, args: argparse.Namespace, tally: Tally, progress: Progress) -> None:
        self.ctx, self.config, self.args, self.tally, self.progress = ctx, config, args, tally, progress
        self.in_flight = CharBudget(IN_FLIGHT_BYTES)  # counts bytes here

    def finish(self, item: Checked, note: str) -> None:
        self.tally.processed_bytes += item.size
        self.progress.advance(item.size, note)

    async def worker(self, batches: Iterator[list[tuple[Path, int]]]) -> None:
        """Read and hash a batch in a worker thread, then settle each file; until no batch is left."""
        for batch in batches:
            async with self.in_flight.hold(sum(size for _, size in batch)):
                checked = await trio.to_thread.run_sync(
                    partial(precheck, batch, self.config.ingest_roots, self.config.max_ingest_chars)
                )
                for item in checked:
                    await self.settle(item)

    async def settle(self, item: Checked) -> None:
        """Skipped, refused, unchanged (the document service says so) or ingested."""
        shown = escaped_path(str(item.path))
        if item.skip is not None:
            self.tally.skipped[item.skip] += 1
            self.finish(item, f"skipped {shown}: {item.skip}")
        elif item.refusal is not None:
            _refuse(self.tally, str(item.path), item.refusal, self.args, self.progress)
            self.finish(item, "")
        elif item.read is None and (earlier := await _unchanged(self.ctx, item)) is not None:
            # (A kept read goes to ingest_read, which looks the file up itself, under the source's lock:
            # asking first cost each changed file a catalog refresh more, often a worker-thread read.)
            self.tally.done.append((item.path, IngestResult(earlier, False, 0.0, unchanged=True)))
            self.finish(item, f"unchanged {shown} -> {earlier.doc_id}")
        else:
            await self.ingest(item)

    async def ingest(self, item: Checked) -> None:
        shown = escaped_path(str(item.path))
        documents = self.ctx.documents
        try:
            if item.read is not None:
                result = await documents.ingest_read(str(item.path), item.read)
            else:
                result = await documents.ingest(file_path=str(item.path))
        except NotTextError as exc:
            self.tally.skipped[exc.reason] += 1
            self.finish(item, f"skipped {shown}: {exc.reason}")
            return
        except IngestError as exc:
            _refuse(self.tally, str(item.path), str(exc), self.args, self.progress)
            self.finish(item, "")
            return
        except StoreError as exc:  # this file could not be stored; the others still can
            self.tally.failed = True
            _refuse(self.tally, str(item.path), f"not stored: {exc}", self.args, self.progress)
            self.finish(item, "")
            return
        self.tally.done.append((item.path, result))
        what = "unchanged" if result.unchanged else "replaced" if result.replaced else "ingested"
        self.finish(item, f"{what} {shown} -> {result.doc.doc_id}")


async def ingest_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    found = await trio.to_thread.run_sync(
        partial(find_files, list(args.paths), config.ingest_roots, exclude=args.exclude, include=args.include)
    )
    tally = Tally(skipped=Counter(found.skipped))
    for path, reason in found.refused:
        _refuse(tally, path, reason, args)
    failed_argument = bool(found.refused)
    if args.verbose:
        for path_, reason in found.skipped_paths:
            err(f"skipped {escaped_path(str(path_))}: {reason}")
    total = sum(size for _, size in found.files)
    started = trio.current_time()
    started_wall = time.time()
    if found.roots:
        config = config.replace(ingest_roots=tuple(found.roots)).validated()
    try:
        with bulk_collection():
            async with open_library(config, stop) as ctx:
                with Progress(
                    "ingest", total=total, unit="B", items=len(found.files), quiet=not args.verbose
                ) as progress:
                    run = _Run(ctx, config, args, tally, progress)
                    batches = iter(precheck_batches(found.files))
                    async with trio.open_nursery() as nursery:
                        for _ in range(PARALLEL_FILES):
                            nursery.start_soon(run.worker, batches)
    finally:
        elapsed_s = trio.current_time() - started
        if stop.cancel_called:
            await _committed_meanwhile(config, found.files, tally, started_wall)
        _report(args, tally, elapsed_s, stop.cancel_called)
    failed_argument = failed_argument or any(Path(path) in found.named for path, _ in tally.refused)
    return 1 if failed_argument or tally.failed else 0


async def _unchanged(ctx: Wiring, item: Checked) -> DocumentInfo | None:
    """What the document service says: the document this read file already is, unchanged, or None."""
    if item.source is None or item.digest is None:
        return None
    return await ctx.documents.unchanged_file(str(item.path), item.source, item.digest)


async def _committed_meanwhile(config: Config, files: list[tuple[Path, int]], tally: Tally, since: float) -> None:
    """Count the ingests that committed as Ctrl-C arrived (their answers were cancelled, not their commits).

    The catalog is the truth: a file this run did not count whose source the catalog
    lists as ingested since the run began was committed by it.
    """
    counted = {path for path, _ in tally.done}
    left = [(path, size) for path, size in files if path not in counted]
    sources = await trio.to_thread.run_sync(lambda: [os.path.realpath(path) for path, _ in left])
    with trio.CancelScope(shield=True):
        async with open_library(config, trio.CancelScope()) as ctx:
            catalog = {info.source: info for info in await ctx.documents.committed_documents()}
    for (path, size), source in zip(left, sources):
        info = catalog.get(source)
        if info is not None and info.ingested_at >= since:
            tally.done.append((path, IngestResult(info, False, 0.0)))
            tally.processed_bytes += size


def _refuse(tally: Tally, path: str, reason: str, args: argparse.Namespace, progress: Progress | None = None) -> None:
    """One line naming what was refused, said once, as it happens (the JSON report lists them instead)."""
    tally.refused.append((path, reason))
    if args.json:
        return
    shown = escaped_path(path)
    line = f"refused {shown}: {_without_path(escaped_path(reason), shown)}"
    if progress is not None:
        progress.write(line)
    else:
        err(line)


def _without_path(said: str, shown: str) -> str:
    """A reason that names the path already, worded to follow it in one shape of line, "refused PATH: REASON",
    as "skipped PATH: REASON" is: the library's reasons name their file ('/dev/null is a character device, not
    a regular file'), the walk's do not ('no such file or directory'), and the two shapes of line these made
    read as two kinds of thing. The path as the subject goes ('a character device, ...', 'it grew past ...'),
    as the object is 'it' ('cannot read it: ...'), at the end goes; a path named otherwise (a link's target)
    stays."""
    if said.startswith(f"{shown} is "):
        return said[len(shown) + len(" is ") :]
    if said.startswith(f"{shown} "):
        return "it" + said[len(shown) :]
    if said.endswith(f": {shown}"):
        return said[: -len(f": {shown}")]
    return said.replace(f" {shown}:", " it:")


def _report(args: argparse.Namespace, tally: Tally, elapsed_s: float, interrupted: bool) -> None:
    done = tally.done
    unchanged = [(path, r) for path, r in done if r.unchanged]
    replaced = [(path, r) for path, r in done if r.replaced and not r.unchanged]
    new = [(path, r) for path, r in done if not r.replaced and not r.unchanged]
    if args.json:

        def files(items: list[tuple[Path, IngestResult]]) -> list[dict[str, object]]:
            return [
                {"path": escaped_path(str(path)), "doc_id": r.doc.doc_id, "chunks": r.doc.chunks} for path, r in items
            ]

        emit_json(
            {
                "ingested": files(new),
                "replaced": files(replaced),
                "unchanged": files(unchanged),
                "refused": [{"path": escaped_path(path), "reason": reason} for path, reason in tally.refused],
                "skipped": dict(sorted(tally.skipped.items())),
                "bytes": tally.processed_bytes,
                "elapsed_s": round(elapsed_s, 3),
                "interrupted": interrupted,
            }
        )
        return
    megabytes = tally.processed_bytes / (1 << 20)
    rate = megabytes / elapsed_s if elapsed_s > 0 else 0.0
    skipped = sum(tally.skipped.values())
    reasons = ", ".join(f"{count} {reason}" for reason, count in tally.skipped.most_common())
    head = "interrupted after" if interrupted else "done:"
    say(
        f"{head} {len(new)} ingested, {len(replaced)} replaced, {len(unchanged)} unchanged, "
        f"{skipped} skipped{f' ({reasons})' if reasons else ''}, {len(tally.refused)} refused; "
        f"{megabytes:.1f} MB in {elapsed_s:.2f} s ({rate:.1f} MB/s)"
    )
