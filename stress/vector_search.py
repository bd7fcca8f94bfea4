"""doc_search with semantic recall over 10,000 chunks: latency and memory, against keyword search alone.

Ingests ``--docs`` documents of ``--chunks`` chunks each (real text: the stdlib's ``*.py``
files, cut into ~800-character pieces, 200-token chunks), then stores one random
unit vector of ``--dim`` dimensions per embedded part of each chunk (``chunk_parts``, as
the background embedder cuts them) straight into the vectors file, with the chunk's
real journal line range (what the embedder would have stored, minus the wait for a
real model). Query vectors come from the fake endpoint of ``testkit``
(a hash of the words: instant, so what is timed is ctxtrio's side). Prints, in the same
sitting, ``doc_search`` p50/p95 (wall and CPU, 1,000-token budget) with and without
semantic recall (and how much of the CPU was the in-process fake endpoint's own answer),
the RSS before and after the vectors were loaded, and the file sizes.
``python stress/vector_search.py [--docs 1000] [--chunks 10] [--dim 384]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import httpx
import trio

from ctxtrio._config import Config
from ctxtrio._wiring import open_wiring
from ctxtrio.docs.chunks import chunk_on_line
from ctxtrio.docs.embedding import SemanticIndex, chunk_parts
from ctxtrio.docs.search import search_words
from ctxtrio.docs.service import repository_of
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.embeddings import Embedder
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.store.vectors import VectorRow, VectorStore
from testkit.fake_embeddings import FakeEmbeddings

if TYPE_CHECKING:
    from ctxtrio._wiring import Wiring


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _texts(count: int, size: int) -> list[str]:
    source = "".join(p.read_text(errors="replace") for p in sorted(Path(os.__file__).parent.glob("*.py")))
    return [source[(i * size) % (len(source) - size) :][:size] for i in range(count)]


async def _time(ctx: Wiring, queries: list[str]) -> tuple[list[float], list[float], int]:
    wall: list[float] = []
    cpu: list[float] = []
    skipped = 0
    for query in queries:
        began, began_cpu = time.perf_counter(), time.process_time()
        result = await ctx.documents.search(query, budget_tokens=1000)
        wall.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - began_cpu) * 1000)
        skipped += result.semantic_skipped is not None
    return wall, cpu, skipped


class _Timed(httpx.AsyncBaseTransport):
    """The fake endpoint, with the CPU its answers took (in a real setup the model server's, not ctxtrio's)."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner
        self.cpu_s = 0.0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        began = time.thread_time()  # the fake answers in this thread, at once
        try:
            return await self._inner.handle_async_request(request)
        finally:
            self.cpu_s += time.thread_time() - began


def _line(name: str, wall: list[float], cpu: list[float]) -> str:
    ordered = sorted(wall)
    return (
        f"{name:<26} p50 {statistics.median(ordered):6.1f} ms, p95 {ordered[int(0.95 * (len(ordered) - 1))]:6.1f} ms "
        f"wall; {statistics.mean(cpu):5.1f} ms CPU per search"
    )


async def run(args: argparse.Namespace, data: Path) -> None:
    rng = random.Random(1)
    config = Config(data_dir=data, llm_enabled=False, audit=False, chunk_tokens=200, chunk_overlap_tokens=0)
    texts = _texts(args.docs, 800 * args.chunks)
    async with open_wiring(config) as ctx:
        began = time.perf_counter()
        for n, text in enumerate(texts):
            await ctx.documents.ingest(text=text, title=f"doc {n}")
        journals = repository_of(ctx.documents).current_journals()
        chunks = sum(entry.info.chunks for entry in journals.values())
        print(f"ingested {len(texts)} documents, {chunks} chunks in {time.perf_counter() - began:.1f} s")
        vectors = VectorStore(ctx.data.vectors_path)
        vectors.open()
        fake = FakeEmbeddings(model="bench-embed", dimension=args.dim)
        for journal, entry in journals.items():
            read = await ctx.store.read(repository_of(ctx.documents).gen_path(entry.doc_id, entry.gen))
            rows = []
            for record in read.records:
                chunk = chunk_on_line(record.data)
                if chunk is None:
                    continue
                for number, part in enumerate(chunk_parts(chunk)):  # as many vectors as the embedder stores
                    vector = [rng.gauss(0, 1) for _ in range(args.dim)]
                    norm = sum(x * x for x in vector) ** 0.5
                    unit = [x / norm for x in vector]
                    rows.append(
                        VectorRow(
                            journal, str(chunk.index), number, record.offset, record.end, unit, (part.start, part.end)
                        )
                    )
            vectors.add(fake.model, args.dim, rows)
        vectors.close()
        words = sorted({w for text in texts[:50] for w in search_words(text[:400])[0]})
        queries = [" ".join(rng.sample(words, 3)) for _ in range(args.queries)]
        print(f"load average {os.getloadavg()[0]:.2f}")
        wall, cpu, _ = await _time(ctx, queries)
        print(_line("keyword search alone", wall, cpu))
        rss_before = _rss_mb()
        settings = LLMSettings("http://bench.invalid/v1", model=fake.model, concurrency=2)
        endpoint = _Timed(fake.transport())
        async with open_llm_client(settings, transport=endpoint) as client, trio.open_nursery() as nursery:
            index = SemanticIndex(
                repository_of(ctx.documents), Embedder(client, fake.model), VectorStore(ctx.data.vectors_path)
            )
            await nursery.start(index.run)
            ctx.documents.semantic = index
            while index.status().state != "caught up":
                await trio.sleep(0.1)
            status = index.status()
            print(
                f"vectors: {status.vectors} of {status.dimension} dims for {status.chunks_embedded} of "
                f"{status.chunks_total} chunks"
            )
            endpoint.cpu_s = 0.0
            wall, cpu, skipped = await _time(ctx, [q + " x" for q in queries])  # not the cached query vectors
            fake_ms = endpoint.cpu_s * 1000 / len(queries)
            print(
                _line("with semantic recall", wall, cpu)
                + f" (of which {fake_ms:.1f} ms the fake endpoint's answer); {skipped} skipped"
            )
            print(
                f"RSS {rss_before:.0f} MB before the vectors, {_rss_mb():.0f} MB after "
                f"(matrix {index.status().memory_bytes / 1e6:.1f} MB); vectors file "
                f"{ctx.data.vectors_path.stat().st_size / 1e6:.1f} MB, index "
                f"{ctx.data.index_path.stat().st_size / 1e6:.1f} MB; load average {os.getloadavg()[0]:.2f}"
            )
            ctx.documents.semantic = None
            nursery.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--chunks", type=int, default=10, help="chunks per document (about)")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trio.run(run, args, Path(tmp) / "data")


if __name__ == "__main__":
    main()
