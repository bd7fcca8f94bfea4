"""``docs``, ``ingest`` and ``search``: documents as a person sees them."""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from functools import partial
from typing import TYPE_CHECKING

import trio

from .._errors import IngestError
from .._limits import SEARCH_WORDS
from ..docs.model import IngestResult
from ..docs.sandbox import read_source
from .library import catalog_state, open_library
from .output import emit_json, err, say, when
from .progress import Progress
from .walk import find_files

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from pathlib import Path

    from .._config import Config
    from .commands import Command

__all__ = ["ARGUMENTS", "COMMANDS"]

#: Files ingested at once (the document service admits four past reading and chunking).
PARALLEL_FILES = 4
#: Files read and hashed per worker-thread call when looking for unchanged ones.
PRECHECK_FILES = 32


def precheck(
    batch: list[tuple[Path, int]], roots: tuple[Path, ...], max_bytes: int
) -> list[tuple[Path, int, str | None, str | None]]:
    """(path, size, resolved source, SHA-256 of its text) per file, read under the sandbox's rules (blocking).

    Only decides what is unchanged (same source, hash and title as the catalog says):
    anything unreadable gets None and goes to the service, which refuses it by name.
    """
    checked: list[tuple[Path, int, str | None, str | None]] = []
    for path, size in batch:
        try:
            text, resolved = read_source(str(path), roots, max_bytes=max_bytes)
        except IngestError:
            checked.append((path, size, None, None))
            continue
        checked.append((path, size, str(resolved), hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()))
    return checked


def _docs_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


def _ingest_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", metavar="PATH", nargs="+", help="files, directories (walked) or globs ('docs/**/*.md')")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


def _search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--doc", metavar="ID", help="search one document only")
    p.add_argument("--limit", metavar="N", type=int, default=10, help="most hits (default 10)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


async def docs_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    async with open_library(config, stop) as ctx:
        docs = await ctx.documents.list_documents()
    if args.json:
        emit_json([asdict(doc) for doc in docs])
        return 0
    if not docs:
        say("no documents")
    for doc in docs:
        say(f"{doc.doc_id}  {doc.chunks} chunks  {doc.tokens} tokens  {doc.chars} chars  "
              f"{when(doc.ingested_at)}  \"{doc.title}\"  {doc.source}")
    return 0


async def ingest_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    found = await trio.to_thread.run_sync(find_files, list(args.paths), config.ingest_roots)
    refused: list[tuple[str, str]] = list(found.refused)
    done: list[tuple[Path, IngestResult]] = []
    total = sum(size for _, size in found.files)
    started = trio.current_time()
    if found.roots:
        config = config.replace(ingest_roots=tuple(found.roots)).validated()
    try:
        async with open_library(config, stop) as ctx:
            # Straight from the catalog journal, read once for the unchanged check of every file.
            known = {entry.info.source: entry.info for entry in (await catalog_state(ctx)).docs.values()}
            with Progress("ingest", total=total, unit="B", items=len(found.files)) as progress:
                batches = iter([found.files[i : i + PRECHECK_FILES] for i in range(0, len(found.files), PRECHECK_FILES)])

                async def ingest_one(path: Path, size: int) -> None:
                    try:
                        result = await ctx.documents.ingest(file_path=str(path))
                    except IngestError as exc:
                        refused.append((str(path), str(exc)))
                        progress.advance(size, f"refused {path}: {exc}")
                        return
                    done.append((path, result))
                    what = "unchanged" if result.unchanged else "replaced" if result.replaced else "ingested"
                    progress.advance(size, f"{what} {path} -> {result.doc.doc_id}")

                async def worker() -> None:
                    for batch in batches:
                        checked = await trio.to_thread.run_sync(
                            partial(precheck, batch, config.ingest_roots, config.max_ingest_chars)
                        )
                        for path, size, source, digest in checked:
                            earlier = known.get(source) if source is not None else None
                            if earlier is not None and earlier.content_hash == digest and earlier.title == path.name:
                                done.append((path, IngestResult(earlier, False, 0.0, unchanged=True)))
                                progress.advance(size, f"unchanged {path} -> {earlier.doc_id}")
                            else:
                                await ingest_one(path, size)

                async with trio.open_nursery() as nursery:
                    for _ in range(PARALLEL_FILES):
                        nursery.start_soon(worker)
    finally:
        _report_ingest(args, done, refused, total, trio.current_time() - started, stop.cancel_called)
    return 1 if refused else 0


def _report_ingest(
    args: argparse.Namespace,
    done: list[tuple[Path, IngestResult]],
    refused: list[tuple[str, str]],
    total: int,
    elapsed_s: float,
    interrupted: bool,
) -> None:
    unchanged = [(path, r) for path, r in done if r.unchanged]
    replaced = [(path, r) for path, r in done if r.replaced and not r.unchanged]
    new = [(path, r) for path, r in done if not r.replaced and not r.unchanged]
    if args.json:
        def files(items: list[tuple[Path, IngestResult]]) -> list[dict[str, object]]:
            return [{"path": str(path), "doc_id": r.doc.doc_id, "chunks": r.doc.chunks} for path, r in items]

        emit_json({
            "ingested": files(new), "replaced": files(replaced), "unchanged": files(unchanged),
            "refused": [{"path": path, "reason": reason} for path, reason in refused],
            "bytes": total, "elapsed_s": round(elapsed_s, 3), "interrupted": interrupted,
        })
        return
    for path, reason in refused:
        err(f"refused {path}: {reason}")
    rate = total / elapsed_s / (1 << 20) if elapsed_s > 0 else 0.0
    head = "interrupted after" if interrupted else "done:"
    say(f"{head} {len(new)} ingested, {len(replaced)} replaced, {len(unchanged)} unchanged, "
          f"{len(refused)} refused; {total / (1 << 20):.1f} MB in {elapsed_s:.2f} s ({rate:.1f} MB/s)")


async def search_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    async with open_library(config, stop) as ctx:
        result = await ctx.documents.search(args.query, doc_id=args.doc, limit=args.limit)
    if args.json:
        emit_json(asdict(result))
        return 0
    if not result.hits:
        say(f"no match for {args.query!r}")
    for hit in result.hits:
        trail = " > ".join(hit.trail)
        say(f"== {hit.doc_id} \"{hit.title}\" #{hit.index}{' · ' + trail if trail else ''} · score {hit.score:.2f}")
        say(hit.text.rstrip() + (" ..." if hit.cut else ""))
    if result.omitted or result.more:
        say(f"({result.omitted} more did not fit the budget{'; more beyond --limit' if result.more else ''})")
    if result.words_left_out:
        say(f"(only the first {SEARCH_WORDS} distinct words of the query were searched)")
    return 0


COMMANDS: dict[str, Command] = {"docs": docs_command, "ingest": ingest_command, "search": search_command}
ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "docs": _docs_args,
    "ingest": _ingest_args,
    "search": _search_args,
}
