"""How long a document ingested during a backfill waits before it is searchable by meaning.

``python stress/embed_lag.py [--venv V] [--mb 3] [--after 30] [--wait 300]``

A team ingests a corpus at once and keeps working: the background embedder then has a
backlog of hours on a CPU-only embedder, and meanwhile a model ingests one more document,
or a file is edited and ingested again, and searches it. This starts
``stress/real_embeddings.EmbedServer`` (all-MiniLM-L6-v2 on llama-cpp-python, 1 thread),
opens ctxtrio with ``--embed-model`` pointed at it (the real wiring: ``_app.py`` starts the
embedder), ingests python3.11-doc's reST sources (sorted, up to ``--mb``), waits
``--after`` seconds of embedding, then

* ingests a new document (8 sections cut from the corpus's last file), and
* ingests the first file again with one line added (its other chunks' vectors are held),

and polls the vectors file every 0.5 s (its own connection, as ``ctxtrio doctor`` reads it)
until each has every chunk embedded, or ``--wait`` seconds pass. It prints, for each,
the seconds from its ingest's acknowledgement to fully embedded, and the backlog (chunks
not embedded yet) when it was ingested.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_corpus import backlog, backlog_parser
from real_embeddings import MODEL_ALIAS, EmbedServer, one_thread_server

from ctxtrio._app import open_context
from ctxtrio._config import Config
from ctxtrio.docs.service import repository_of
from ctxtrio.store.vectors import VectorStore

if TYPE_CHECKING:
    from ctxtrio._context import Context


def _journal_of(ctx: Context, doc_id: str) -> tuple[str, int]:
    """(journal, chunks) of ``doc_id``'s current generation."""
    repo = repository_of(ctx.documents)
    for journal, entry in repo.current_journals().items():
        if entry.doc_id == doc_id:
            return journal, entry.info.chunks
    raise LookupError(doc_id)


async def run(server: EmbedServer, data: Path, files: list[tuple[str, str]], after_s: float, wait_s: float) -> None:
    config = Config(
        data_dir=data, llm_enabled=False, audit=False, embed_model=MODEL_ALIAS, embed_base_url=server.base_url
    )
    async with open_context(config) as ctx:
        began = time.perf_counter()
        ids = [(await ctx.documents.ingest(text=text, title=title)).doc.doc_id for title, text in files]
        print(f"ingested {len(files)} files in {time.perf_counter() - began:.0f} s", flush=True)
        semantic = ctx.documents.semantic
        assert semantic is not None
        await trio.sleep(after_s)
        status = semantic.status()
        backlog = status.chunks_total - status.chunks_embedded
        print(f"after {after_s:g} s of embedding: {status.chunks_embedded} of {status.chunks_total} chunks", flush=True)
        title, text = files[0]
        fresh_text = "\n\n".join(f"## Step {i}\n\n" + files[-1][1][i * 3000 : (i + 1) * 3000] for i in range(8))
        fresh = await ctx.documents.ingest(text=fresh_text, title="fresh", doc_id="fresh-page")
        fresh_at = time.perf_counter()
        edited = await ctx.documents.ingest(text=text + "\nOne line added by an edit.\n", title=title, doc_id=ids[0])
        edited_at = time.perf_counter()
        watched = {"new document": (fresh.doc.doc_id, fresh_at), "edited first file": (edited.doc.doc_id, edited_at)}
        vectors = VectorStore(ctx.data.vectors_path)
        await trio.to_thread.run_sync(vectors.open)
        took: dict[str, float] = {}
        try:
            while len(took) < len(watched) and time.perf_counter() - fresh_at < wait_s:
                await trio.sleep(0.5)
                dims = await trio.to_thread.run_sync(vectors.dimensions, MODEL_ALIAS)
                if len(dims) != 1:
                    continue
                for name, (doc_id, at) in watched.items():
                    journal, chunks = _journal_of(ctx, doc_id)
                    asked = functools.partial(vectors.done, MODEL_ALIAS, dims[0], journal=journal)
                    done = await trio.to_thread.run_sync(asked)
                    if name not in took and len(done.get(journal, ())) >= chunks:
                        took[name] = time.perf_counter() - at
        finally:
            await trio.to_thread.run_sync(vectors.close)
        for name in watched:
            shown = f"{took[name]:.1f} s" if name in took else f"not within {wait_s:g} s"
            print(f"{name}: every chunk embedded {shown} after its ingest (backlog then {backlog} chunks)")
        status = semantic.status()
        print(f"at the end: {status.chunks_embedded} of {status.chunks_total} chunks; load {os.getloadavg()[0]:.1f}")


def main() -> int:
    parser = backlog_parser(__doc__, 3.0)
    parser.add_argument("--after", type=float, default=30.0, help="seconds of embedding before the new ingests")
    parser.add_argument("--wait", type=float, default=300.0, help="give up on a document after this many seconds")
    args = parser.parse_args()
    files = backlog(args.mb)
    with one_thread_server(args.venv, args.port) as server, tempfile.TemporaryDirectory() as tmp:
        trio.run(run, server, Path(tmp) / "data", files, args.after, args.wait)
    return 0


if __name__ == "__main__":
    sys.exit(main())
