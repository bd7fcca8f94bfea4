"""``retrieval_bench.py --data DIR``: keep the server's data dir between runs and ingest only what changed.

``DIR/data`` is the server's data dir (``DIR/corpus`` holds the pages ``--html`` converts, so
their paths stay), ``DIR/chunking.json`` records, per document, a digest of what the run that
ingested it stored (:func:`fingerprint`: every chunk's journal body and its index rows).
Before any ingest, :func:`plan` decides per file:

* the document service says ingesting it would change nothing
  (:meth:`~ctxtrio.docs.service.DocumentService.unchanged_file`, what ``ctxtrio ingest`` asks:
  the same resolved path, text and title) and this tree chunks and indexes its text as
  recorded: it is not ingested, so its generation file, index rows and vectors stay as they
  are and nothing of it is embedded again;
* a new file, a changed text, or a document with no digest recorded (a run stopped between
  its ingest and the record): ingested again under its id, so only its chunks are embedded;
* a document of ``DIR`` this run does not ingest (another ``--sources`` or ``--files``): the
  run stops (:class:`Refused`, a SystemExit out of :func:`refusing`) before ingesting
  anything, since searches would find it too;
* an unchanged text this tree chunks or indexes otherwise (another tree's chunking, another
  ``--chunk-tokens``): the run stops before ingesting anything. Ingesting again would be
  correct too, but it re-embeds the whole corpus (16-27 minutes for the Python manual)
  and overwrites the data another tree's runs keep reusing, so that choice is the user's:
  another ``--data`` DIR per chunking.

The chunks compared are this tree's (:func:`~ctxtrio.text.chunking.iter_chunks` with the
server's chunk size, overlap, token model and kind, as ``docs/ingest.py`` chunks) against the
digest of the stored ones (:func:`record`, read back after the ingest): were the two ever to
disagree for one tree, its second run would refuse (tests/docs/test_bench_data.py runs it).
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from retrieval_questions import doc_id_for

from ctxtrio.docs.arguments import read_file
from ctxtrio.docs.chunks import chunk_body, heading_terms
from ctxtrio.docs.ingest import text_digest
from ctxtrio.docs.service import repository_of
from ctxtrio.text.chunking import iter_chunks
from ctxtrio.text.kinds import kind_for
from ctxtrio.text.terms import index_text

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from ctxtrio._wiring import Wiring
    from ctxtrio.text.chunking import Chunk

__all__ = ["STAMP", "Plan", "Refused", "data_dir", "fingerprint", "plan", "record", "refusing"]

#: The digests of what each document's ingest stored, beside the server's data dir.
STAMP = "chunking.json"


def data_dir(kept: Path) -> Path:
    """The server's data dir inside ``--data`` DIR."""
    return kept / "data"


class Refused(Exception):
    """``--data`` DIR cannot serve this run; the message says why and what to do."""


@contextmanager
def refusing() -> Iterator[None]:
    """A :class:`Refused` raised inside the server's nurseries (which wrap it in exception
    groups) comes out as SystemExit with its message: a line for the user, not a traceback."""
    try:
        yield
    except* Refused as refused:
        first: BaseException = refused
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise SystemExit(str(first)) from None


@dataclass(frozen=True, slots=True)
class Plan:
    """What a run with ``--data`` does with its files."""

    ingest: list[Path]
    #: Files left as they are: unchanged and chunked as recorded.
    kept: int


def fingerprint(chunks: Iterable[Chunk]) -> str:
    """SHA-256 over each chunk's journal body (:func:`~ctxtrio.docs.chunks.chunk_body`) and its
    index rows' text (as :class:`~ctxtrio.docs.chunks.ChunkBatcher` builds them): what an ingest
    stores of a text, so another chunking or another index text gives another digest."""
    digest = hashlib.sha256()
    for chunk in chunks:
        body = json.dumps(chunk_body(chunk), ensure_ascii=False, sort_keys=True)
        for part in (body, index_text(chunk.text), heading_terms(chunk.trail)):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def _read(ctx: Wiring, path: Path) -> tuple[str, str]:
    """The file's text and resolved path, read as ``doc_ingest`` reads it (blocking)."""
    config = ctx.config
    read = read_file(str(path), config.ingest_roots, config.max_ingest_chars)
    return read.text, read.source


def _chunked(ctx: Wiring, path: Path, text: str) -> str:
    """The :func:`fingerprint` of ``text`` as this tree's ingest would chunk it (blocking)."""
    config = ctx.config
    chunks = iter_chunks(
        text,
        chunk_tokens=config.chunk_tokens,
        overlap_tokens=config.chunk_overlap_tokens,
        model=ctx.live.tokens.current,
        kind=kind_for(text, str(path), None),  # as the service sniffs a file ingested with no title
    )
    return fingerprint(chunks)


def _load(stamp: Path) -> dict[str, str]:
    if not stamp.exists():
        return {}
    loaded = json.loads(stamp.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return {str(doc_id): str(digest) for doc_id, digest in loaded.items()}


def _save(stamp: Path, digests: dict[str, str]) -> None:
    temporary = stamp.with_suffix(".tmp")
    temporary.write_text(json.dumps(digests, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, stamp)


async def plan(ctx: Wiring, kept: Path, corpus: Path, files: list[Path]) -> Plan:
    """Which of ``files`` to ingest into ``--data`` ``kept``; :class:`Refused` before any ingest when
    the dir holds documents this run would not ingest or were chunked otherwise."""
    ids = {doc_id_for(str(path.relative_to(corpus))): path for path in files}
    strangers = sorted(info.doc_id for info in await ctx.documents.list_documents() if info.doc_id not in ids)
    if strangers:
        raise Refused(
            f"--data {kept} holds {len(strangers)} document{'s' * (len(strangers) > 1)} this run does not ingest "
            f"(e.g. {strangers[0]}): "
            "it was filled with other --sources or --files, and searches would find them too; use another --data DIR"
        )
    stamp = kept / STAMP
    recorded = await trio.to_thread.run_sync(_load, stamp)
    ingest: list[Path] = []
    others: list[str] = []
    for doc_id, path in ids.items():
        text, source = await trio.to_thread.run_sync(_read, ctx, path)
        earlier = await ctx.documents.unchanged_file(str(path), source, text_digest(text))
        if earlier is None or earlier.doc_id != doc_id or doc_id not in recorded:
            ingest.append(path)
        elif await trio.to_thread.run_sync(_chunked, ctx, path, text) != recorded[doc_id]:
            others.append(str(path.relative_to(corpus)))
    if others:
        raise Refused(
            f"--data {kept}: this tree chunks or indexes {len(others)} of the {len(files) - len(ingest)} unchanged "
            f"files otherwise than the run that stored them (e.g. {others[0]}): another tree's chunking or another "
            "--chunk-tokens. Their chunks, index rows and vectors would be stale; ingesting them again would "
            "re-embed them all: use another --data DIR for this chunking (or delete this one)"
        )
    # Forgotten before they are ingested again: a run stopped in between leaves them unrecorded
    # (ingested again next time), never recorded with the digest of the text they replace.
    for path in ingest:
        recorded.pop(doc_id_for(str(path.relative_to(corpus))), None)
    await trio.to_thread.run_sync(_save, stamp, recorded)
    return Plan(ingest, len(files) - len(ingest))


async def record(ctx: Wiring, kept: Path, corpus: Path, ingested: list[Path]) -> None:
    """Record the digest of what the store holds for each of ``ingested`` (after their ingest)."""
    stamp = kept / STAMP
    recorded = await trio.to_thread.run_sync(_load, stamp)
    repo = repository_of(ctx.documents)
    for path in ingested:
        doc_id = doc_id_for(str(path.relative_to(corpus)))
        _, doc = await repo.load(doc_id)
        recorded[doc_id] = await trio.to_thread.run_sync(partial(fingerprint, doc.chunks))
    await trio.to_thread.run_sync(_save, stamp, recorded)
