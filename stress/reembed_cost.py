"""What semantic recall sends again when a document changes: texts embedded and wall time.

One real file is ingested (``--file``, a reST page of python3.11-doc by default) with
semantic recall on, then, each time waiting until every chunk is embedded:

1. the file as it is (everything is new);
2. the same file with one line edited (``(edited)`` appended to its middle line),
   re-ingested under the same ``doc_id``: the document is replaced;
3. the document forgotten, then the edited text ingested again.

Each step prints the texts sent to the endpoint, how many of them are distinct, and
the wall time from the ingest call until every chunk is embedded. The endpoint is the
in-process fake of the tests behind ``real_embeddings.Recording`` (``--fake``, the default: counts
only), or the real all-MiniLM-L6-v2 GGUF server of ``stress/real_embeddings.py``
(``--real``: a user's wall time on this machine).

``python stress/reembed_cost.py [--file F] [--real] [--data DIR]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_embeddings import DEFAULT_VENV, MODEL_ALIAS, EmbedServer, Recording, ensure_gguf

from ctxtrio._app import open_context
from ctxtrio._config import Config
from ctxtrio.docs.embedding import SemanticIndex
from ctxtrio.docs.service import repository_of
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.embeddings import Embedder
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.store.vectors import VectorStore
from testkit.fake_embeddings import FakeEmbeddings

if TYPE_CHECKING:
    from ctxtrio._context import Context

DEFAULT_FILE = Path("/usr/share/doc/python3.11/html/_sources/library/shutil.rst.txt")


def edited(text: str) -> str:
    """``text`` with ``(edited)`` appended to the first non-blank line from its middle on."""
    lines = text.split("\n")
    at = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].strip())
    lines[at] += " (edited)"
    return "\n".join(lines)


async def settled(index: SemanticIndex) -> None:
    """Until a pass that began after now finds every chunk embedded."""
    mark = index.passes
    while True:
        index.wake()
        status = index.status()
        if index.passes >= mark + 2 and status.state == "caught up" and status.chunks_embedded == status.chunks_total:
            return
        await trio.sleep(0.05)


async def step(name: str, ctx: Context, index: SemanticIndex, counting: Recording, text: str | None) -> None:
    sent = len(counting.inputs)
    started = time.perf_counter()
    if text is None:
        await ctx.documents.forget("doc")
    else:
        await ctx.documents.ingest(text=text, title="doc", doc_id="doc")
    await settled(index)
    wall = time.perf_counter() - started
    texts = counting.inputs[sent:]
    status = index.status()
    print(
        f"{name}: {len(texts)} texts sent ({len(set(texts))} distinct), {wall:.2f} s wall; "
        f"{status.chunks_embedded} of {status.chunks_total} chunks embedded, {status.vectors} vectors",
        flush=True,
    )


async def run(file: Path, base_url: str, model: str, inner: httpx.AsyncBaseTransport, data: Path) -> None:
    text = file.read_text(encoding="utf-8")
    counting = Recording(inner)
    settings = LLMSettings(base_url, model=model, concurrency=2)
    async with (
        open_context(Config(data_dir=data, llm_enabled=False, audit=False)) as ctx,
        open_llm_client(settings, transport=counting) as client,
        trio.open_nursery() as nursery,
    ):
        index = SemanticIndex(repository_of(ctx.documents), Embedder(client, model), VectorStore(ctx.data.vectors_path))
        await nursery.start(index.run)
        ctx.documents.semantic = index
        print(f"{file} ({len(text):,} characters)")
        await step("1. first ingest", ctx, index, counting, text)
        await step("2. one line edited, re-ingested", ctx, index, counting, edited(text))
        await step("3. forgotten", ctx, index, counting, None)
        await step("4. ingested again after forget", ctx, index, counting, edited(text))
        ctx.documents.semantic = None
        nursery.cancel_scope.cancel()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--real", action="store_true", help="the real all-MiniLM-L6-v2 GGUF server, not the fake")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the real-model venv")
    parser.add_argument("--data", type=Path, help="the data dir (a temporary one by default)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data or Path(tmp) / "data"
        if not args.real:
            fake = FakeEmbeddings(dimension=384)
            trio.run(run, args.file, "http://embed.test/v1", fake.model, fake.transport(), data)
            return 0
        server = EmbedServer(args.venv, ensure_gguf(args.venv, Path("~/.cache/ctxtrio-realmodel/embed").expanduser()))
        server.start()
        try:
            trio.run(run, args.file, server.base_url, MODEL_ALIAS, httpx.AsyncHTTPTransport(), data)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
