"""CPU per MB of each stage of an ingest, on real text, in this process, one stage at a time.

    python stress/ingest_stages.py --corpus stdlib
    python stress/ingest_stages.py --corpus cjk --repeat 3
    python stress/ingest_stages.py --tree go          # a source tree of stress/code_questions.py
    python stress/ingest_stages.py --tree /usr/lib/python3.11/json

Runs the server's own functions over every document of a :mod:`real_text` corpus, stage
by stage, and prints the CPU seconds (user + system, ``time.process_time``) per MB of
each: what ``stress/ingest_cpu.py`` measures per process, split by what the work is.

* ``receive``: the SDK's parse and validation of the ``tools/call`` line carrying the text;
* ``hash``: the content hash of the text;
* ``blocks``: the markdown structural split (:func:`ctxtrio.text.blocks.iter_blocks`);
* ``kind``: sniffing the text's kind (markdown, reST, Python, ...) as an inline ingest does;
* ``chunking``: :func:`ctxtrio.text.chunking.iter_chunks` of that kind, whole (structure and estimates included);
* ``terms``: what the index is given for each chunk (the chunking workers' call);
* ``encode``: each chunk's journal line (body and envelope);
* ``journal``: writing those lines to a fresh generation file, fsync included;
* ``fts5``: inserting the rows into an FTS5 table of the index's schema, one
  transaction per document (the indexer batches several when it can);
* ``commit``: the catalog record of the document, appended and fsynced.

``--tree`` takes a language of ``stress/code_questions.py``'s ``TREES`` or folders instead: the UTF-8
files ``ctxtrio ingest`` would walk there (:func:`ctxtrio.cli.walk.find_files`), each of the kind its
file name says, as a file ingest decides it (``kind`` then times that).

Fixed costs per call (thread hops, the store writer's batches, the pipe to a chunking
process) are not here: ``ingest_cpu.py``'s total minus this sum is that.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
from code_questions import TREES
from mcp import types
from real_text import CORPORA, Doc, code_trees, load, megabytes, tree_docs

# This tree's ctxtrio, not the installed one (an exported revision is measured as itself).
from ctxtrio.docs.catalog import commit_record
from ctxtrio.docs.chunks import chunk_body, heading_terms
from ctxtrio.docs.ingest import text_digest
from ctxtrio.docs.model import DocumentInfo
from ctxtrio.store.index_tables import SCHEMA
from ctxtrio.store.records import NewRecord, encode_members, encode_record
from ctxtrio.text.blocks import iter_blocks
from ctxtrio.text.chunking import Chunk, iter_chunks
from ctxtrio.text.kinds import kind_for
from ctxtrio.text.terms import index_text
from ctxtrio.text.tokens import TokenModel

if TYPE_CHECKING:
    from collections.abc import Callable

CHUNK_TOKENS, OVERLAP_TOKENS = 800, 80


def index_terms(chunk: Chunk) -> tuple[str, str]:
    """What the index is given for a chunk: its text's terms (:func:`ctxtrio.text.terms.index_text`)
    and its trail's (:func:`ctxtrio.docs.chunks.heading_terms`)."""
    return index_text(chunk.text), heading_terms(chunk.trail)


T = TypeVar("T")


def jsonrpc_line(number: int, doc: Doc) -> str:
    """The ``tools/call`` line a client sends for ``doc``."""
    arguments = {"text": doc.text, "doc_id": f"d{number}"}
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {"name": "doc_ingest", "arguments": arguments},
        }
    )


def chunk_lines(chunks: list[Chunk]) -> list[bytes]:
    """The journal lines of ``chunks`` (body encoded as the chunking workers do, then the envelope)."""
    return [
        encode_record(
            NewRecord("chunk", chunk_body(c), id=f"c{c.index}", encoded=encode_members(chunk_body(c))),
            seq=i + 1,
            ts=time.time(),
        )[1]
        for i, c in enumerate(chunks)
    ]


def write_journal(path: Path, lines: list[bytes]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    os.write(fd, b"".join(lines))
    os.fsync(fd)
    os.close(fd)


def insert_rows(index: sqlite3.Connection, journal: str, terms: list[tuple[str, str]]) -> None:
    index.execute("BEGIN IMMEDIATE")
    index.executemany(
        "INSERT INTO chunks(terms, heading, journal, item, line_start, line_end) VALUES(?, ?, ?, ?, ?, ?)",
        [(text, heading, journal, str(i), 0, 0) for i, (text, heading) in enumerate(terms)],
    )
    index.execute("COMMIT")


def append_commit(catalog: int, number: int, doc: Doc, chunks: list[Chunk]) -> None:
    info = DocumentInfo(
        f"d{number}", doc.name, "inline", len(chunks), len(doc.text), sum(c.tokens for c in chunks), time.time(), ""
    )
    os.write(catalog, encode_record(commit_record(info, f"g{number}"), seq=number + 1, ts=time.time())[1])
    os.fsync(catalog)


def run(docs: list[Doc], folder: Path, *, by_name: bool = False) -> dict[str, float]:
    model = TokenModel.cold()
    spent: dict[str, float] = {}

    def timed(stage: str, work: Callable[[], T]) -> T:
        started = time.process_time()
        result = work()
        spent[stage] = spent.get(stage, 0.0) + time.process_time() - started
        return result

    lines = [jsonrpc_line(number, doc) for number, doc in enumerate(docs)]
    index = sqlite3.connect(folder / "index.sqlite", isolation_level=None)
    index.execute("PRAGMA journal_mode=WAL")
    index.execute("PRAGMA synchronous=OFF")
    index.executescript(SCHEMA)
    catalog = os.open(folder / "catalog.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    validate = types.jsonrpc_message_adapter.validate_json
    for number, (doc, line) in enumerate(zip(docs, lines, strict=True)):
        timed("receive", partial(validate, line, by_name=False))
        timed("hash", partial(text_digest, doc.text))
        timed("blocks", partial(lambda text: sum(1 for _ in iter_blocks(text)), doc.text))
        # Inline text is sniffed, as doc_ingest does; a tree's file is of the kind its name says.
        kind = timed("kind", partial(kind_for, doc.text, doc.name if by_name else None, None))
        chunking = partial(
            iter_chunks, doc.text, chunk_tokens=CHUNK_TOKENS, overlap_tokens=OVERLAP_TOKENS, model=model, kind=kind
        )
        chunks = timed("chunking", lambda: list(chunking()))
        terms = timed("terms", partial(lambda found: [index_terms(chunk) for chunk in found], chunks))
        encoded = timed("encode", partial(chunk_lines, chunks))
        timed("journal", partial(write_journal, folder / f"gen{number}.jsonl", encoded))
        timed("fts5", partial(insert_rows, index, f"docs/d{number}/gen.jsonl", terms))
        timed("commit", partial(append_commit, catalog, number, doc, chunks))
    os.close(catalog)
    index.close()
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="stdlib")
    parser.add_argument("--tree", nargs="+", metavar="PATH", help="a language of code_questions.TREES, or folders")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the lowest per stage is printed")
    args = parser.parse_args()
    if args.tree:
        docs = code_trees(args.tree) if set(args.tree) <= set(TREES) else tree_docs(args.tree)
    else:
        docs = load(args.corpus)
    what = " ".join(args.tree) if args.tree else args.corpus
    size = megabytes(docs)
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="ingest-stages-") as tmp:
            for stage, seconds in run(docs, Path(tmp), by_name=bool(args.tree)).items():
                best[stage] = min(seconds, best.get(stage, seconds))
    print(
        f"{what}: {len(docs)} files, {size:.2f} MB; CPU-s per MB (best of {args.repeat}); load {os.getloadavg()[0]:.1f}"
    )
    for stage, seconds in best.items():
        print(f"  {stage:<10} {seconds / size:7.4f}   ({seconds:6.2f} s)")
    total = sum(seconds for stage, seconds in best.items() if stage != "blocks")
    print(f"  {'sum':<10} {total / size:7.4f}   ({total:6.2f} s; blocks are part of chunking)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
