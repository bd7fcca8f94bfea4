"""``docs``, ``ingest`` (:mod:`.ingest`), ``search`` and ``forget``: documents as a person sees them."""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import TYPE_CHECKING

from .._limits import SEARCH_WORDS, calling
from ..docs.sandbox import escaped_path
from ..text.plural import plural, token_count
from ..text.terms import terms, unique_terms
from .ingest import add_arguments, ingest_command
from .library import open_library
from .output import ask, emit_json, err, say, when

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

    import trio

    from .._config import Config
    from ..docs.model import DocumentInfo
    from .commands import Command

__all__ = ["ARGUMENTS", "COMMANDS"]


def _docs_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


def _search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "query", metavar="WORD", nargs="+", help="the query: every word up to the options (no quotes needed)"
    )
    p.add_argument("--doc", metavar="ID", help="search one document only: its id, or its file's path or name")
    p.add_argument("--limit", metavar="N", type=int, default=10, help="most hits (default 10)")
    p.add_argument("--full", action="store_true", help="print each matching chunk whole, not only its matching lines")
    p.add_argument("--json", action="store_true", help="print JSON for scripts (the library's SearchResult, as ever)")


def _forget_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "docs",
        metavar="DOC",
        nargs="+",
        help="documents: ids (ctxtrio docs lists them), or their files' paths or names",
    )
    p.add_argument("--yes", action="store_true", help="do not ask")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


async def docs_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    async with open_library(config, stop, read_only=args.read_only) as ctx:
        docs = await ctx.documents.list_documents()
    if args.json:
        emit_json([asdict(doc) for doc in docs])
        return 0
    if not docs:
        say("no documents")
    for doc in docs:
        say(
            f"{doc.doc_id}  {plural(doc.chunks, 'chunk')}  {token_count(doc.tokens)}  {doc.chars} chars  "
            f'{when(doc.ingested_at)}  "{doc.title}"  {doc.source}'
        )
    return 0


async def search_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    query = " ".join(args.query)
    async with open_library(config, stop, read_only=args.read_only) as ctx:
        doc_id = None
        if args.doc is not None:
            doc_id, several = _named(await ctx.documents.list_documents(), args.doc)
            if doc_id is None:  # said here: the library's check of a path named none was "invalid doc_id 'a/b.md'"
                err(f"ctxtrio: error: {_none_or_several(args.doc, several)}")
                return 2
        with calling(limit="--limit"):  # the library's check named 'limit', a flag this command spells --limit
            result = await ctx.documents.search(query, doc_id=doc_id, limit=args.limit)
        sources = {doc.doc_id: doc.source for doc in await ctx.documents.list_documents()} if result.hits else {}
    if args.json:
        emit_json(asdict(result))
        return 0
    if not result.hits:
        say(f"no match for {query!r}")
    wanted = set(unique_terms(query))
    for rank, hit in enumerate(result.hits, start=1):
        trail = " > ".join(hit.trail)
        source = sources.get(hit.doc_id, "")
        where = escaped_path(source) if source and source != "inline" else f'"{hit.title}" (inline text)'
        # The rank, not the score: BM25 is near 0 for words half the chunks or more hold ("score 0.00" for
        # every hit), and the hits are ordered by the re-ranking, which the score alone does not follow.
        found = f"hit {rank}{', by meaning' if hit.by_meaning else ''}"
        say(f"{where}  [{hit.doc_id} #{hit.index}{' · ' + trail if trail else ''} · {found}]")
        if args.full:
            say(hit.text.rstrip() + (" ..." if hit.cut else ""))
        else:
            for line in matching_lines(hit.text, wanted):
                say(line)
        say("")
    notes = [f"{plural(result.omitted, 'more hit')} did not fit the budget"] if result.omitted else []
    notes += ["more match beyond --limit"] if result.more else []
    if notes:
        say(f"({'; '.join(notes)})")
    if result.words_left_out:
        say(f"(only the first {SEARCH_WORDS} distinct words of the query were searched)")
    return 0


def _none_or_several(given: str, several: Sequence[str], flag: str = "--doc ") -> str:
    if not several:
        return f"no document {given!r}; ctxtrio docs lists them"
    return f"{flag}{given!r} names {len(several)} documents: {'; '.join(several)}; pass one's id"


def _named(docs: Sequence[DocumentInfo], given: str) -> tuple[str | None, list[str]]:
    """The id of the document ``given`` names (None for none or several), and ``id (source)`` of each of several.

    A folder's files get generated ids (doc-2286e5d7) and a person types the file: ``given`` is an id, or
    else the path of one document's source (as given, or from here, or through links), or the end of sources' paths
    (``a.md``, ``sub/a.md``).
    """
    if any(doc.doc_id == given for doc in docs):
        return given, []
    files = [doc for doc in docs if doc.source != "inline"]
    # A file ingested through a link is stored as the file it names (os.path.realpath): the link's path finds it.
    exact = [doc for doc in files if doc.source in (given, os.path.abspath(given), os.path.realpath(given))]
    ending = exact or [doc for doc in files if doc.source.endswith(os.sep + given.lstrip(os.sep))]
    if len(ending) == 1:
        return ending[0].doc_id, []
    return None, [f"{doc.doc_id} ({escaped_path(doc.source)})" for doc in ending]


def matching_lines(text: str, wanted: set[str], *, context: int = 1, most: int = 6) -> list[str]:
    """The lines of ``text`` holding a query term, ``context`` lines around each, ``>`` marking the matches.

    Groups that do not touch are separated by ``--`` (as grep does); after ``most``
    matching lines the rest is counted, and ``--full`` shows the whole chunk.
    """
    lines = text.rstrip().splitlines()
    hits = [n for n, line in enumerate(lines) if wanted & set(terms(line))]
    if not hits:  # matched through a term split across lines or the title: show the start
        hits = [0] if lines else []
    shown = hits[:most]
    keep = sorted({k for n in shown for k in range(max(0, n - context), min(len(lines), n + context + 1))})
    out: list[str] = []
    for previous, n in zip([None, *keep], keep):
        if previous is not None and n != previous + 1:
            out.append("  --")
        out.append(f"{'>' if n in shown else ' '} {lines[n]}")
    if len(hits) > most:
        out.append(f"  ({plural(len(hits) - most, 'more matching line')} in this chunk; --full shows it)")
    return out


async def forget_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    async with open_library(config, stop) as ctx:
        docs = await ctx.documents.list_documents()
        known = {doc.doc_id: doc for doc in docs}
        named = {given: _named(docs, given) for given in args.docs}  # as search --doc takes a document
        missing = [given for given, (doc_id, several) in named.items() if doc_id is None and not several]
        if missing:
            listed = ", ".join(map(repr, missing))  # as search --doc says it (the library's message and its hint)
            err(
                f"ctxtrio: error: no {'document' if len(missing) == 1 else 'documents'} {listed}; ctxtrio docs lists them"
            )
            return 2
        for given, (_, several) in named.items():  # nothing is forgotten on a guess
            if several:
                err(f"ctxtrio: error: {_none_or_several(given, several, flag='')}")
        if any(several for _, several in named.values()):
            return 2
        chosen = list(dict.fromkeys(doc_id for doc_id, _ in named.values() if doc_id is not None))
        shown = ", ".join(_forgetting(known[doc_id]) for doc_id in chosen)
        if not ask(f"Forget {shown}? This cannot be undone; the files themselves stay.", yes=args.yes):
            err("nothing forgotten")
            return 1
        done = []
        for doc_id in chosen:
            info = await ctx.documents.forget(doc_id)
            done.append(asdict(info))
            if not args.json:
                say(f'forgot {doc_id} "{info.title}" ({plural(info.chunks, "chunk")})')
    if args.json:
        emit_json(done)
    return 0


def _forgetting(doc: DocumentInfo) -> str:
    """A document as forget asks about it: its file too, when it has one (a name given may have found it)."""
    source = f", {escaped_path(doc.source)}" if doc.source != "inline" else ""
    return f'{doc.doc_id} ("{doc.title}", {plural(doc.chunks, "chunk")}{source})'


COMMANDS: dict[str, Command] = {
    "docs": docs_command,
    "ingest": ingest_command,
    "search": search_command,
    "forget": forget_command,
}
ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "docs": _docs_args,
    "ingest": add_arguments,
    "search": _search_args,
    "forget": _forget_args,
}
