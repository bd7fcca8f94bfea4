"""What one document ingest costs below the tools, in one process: CPU, worker-thread hops, writer batches.

    python stress/ingest_hops.py                        # 1,500 texts of ~100 bytes
    python stress/ingest_hops.py --corpus stdlib --docs 600
    python stress/ingest_hops.py --tree /tmp/before     # another checkout, same driver
    python stress/ingest_hops.py --corpus stdlib --docs 2000 --reingest 100

Opens the library on a fresh data dir (no LLM, no audit), ingests one warm-up text, then
each text once through ``DocumentService.ingest``, one at a time. Printed per document:
the process's CPU (every thread; chunking processes not included), the event loop's
thread CPU, wall time, the store writer's batches and fsync groups
(``StoreHandle.stats``), and the worker-thread calls (``trio.to_thread.run_sync``,
counted by name). With ``--reingest N``, then N of the documents (spread over them) are
ingested again one at a time with a line added, each replacing its earlier generation
(whose rows the index forgets), and the same is printed for them, the index settled
included. Name the load beside any figure. Linux only.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", help="real text (stress/real_text.py) instead of ~100-byte texts")
    parser.add_argument("--docs", type=int, default=1500)
    parser.add_argument("--tree", type=Path, help="checkout whose ctxtrio is measured (default: this one)")
    parser.add_argument("--reingest", type=int, default=0, help="then ingest this many of the documents again, changed")
    args = parser.parse_args()
    tree = (args.tree or Path(__file__).resolve().parents[1]).resolve()
    sys.path.insert(0, str(tree))
    sys.path.insert(1, str(Path(__file__).resolve().parent))
    import trio
    import trio.to_thread

    hops: collections.Counter[str] = collections.Counter()
    real_run_sync = trio.to_thread.run_sync

    async def counted(fn: Any, *rest: Any, **options: Any) -> Any:
        inner = fn.func if isinstance(fn, functools.partial) else fn
        hops[getattr(inner, "__qualname__", repr(inner))] += 1
        return await real_run_sync(fn, *rest, **options)

    trio.to_thread.run_sync = counted  # type: ignore[assignment]
    from ctxtrio._config import Config
    from ctxtrio._wiring import open_wiring

    if args.corpus:
        from real_text import load

        texts = [doc.text for doc in load(args.corpus)][: args.docs]
    else:
        texts = [f"word{number} " * 16 for number in range(args.docs)]

    async def run() -> None:
        with tempfile.TemporaryDirectory(prefix="ingest-hops-") as tmp:
            config = Config(data_dir=Path(tmp), llm_enabled=False, audit=False)
            async with open_wiring(config) as wiring:
                documents = wiring.context.documents
                await documents.ingest(text="warm up", doc_id="warm")
                stats = wiring.store.stats
                batches, fsyncs = stats.batches, stats.fsyncs
                hops.clear()
                loop, process, wall = time.thread_time(), time.process_time(), time.perf_counter()
                for number, text in enumerate(texts):
                    await documents.ingest(text=text, doc_id=f"d-{number}")
                loop, process = time.thread_time() - loop, time.process_time() - process
                wall = time.perf_counter() - wall
                count, mb = len(texts), sum(len(text.encode()) for text in texts) / 1e6
                print(
                    f"{tree}: {count} documents, {mb:.2f} MB: CPU {1e3 * process / count:.2f} ms a document "
                    f"({process / mb:.3f} CPU-s/MB), event loop {1e3 * loop / count:.2f} ms, "
                    f"wall {1e3 * wall / count:.2f} ms; writer batches {(stats.batches - batches) / count:.2f}, "
                    f"fsync groups {(stats.fsyncs - fsyncs) / count:.2f}, worker-thread calls "
                    f"{sum(hops.values()) / count:.2f} a document; load {os.getloadavg()[0]:.1f}"
                )
                for name, calls in hops.most_common(6):
                    print(f"    {name}: {calls / count:.2f} a document")
                if args.reingest:
                    await wiring.store.index_settled()
                    picks = list(range(0, count, max(1, count // args.reingest)))[: args.reingest]
                    loop, process, wall = time.thread_time(), time.process_time(), time.perf_counter()
                    for number in picks:
                        await documents.ingest(text=texts[number] + "\nchanged\n", doc_id=f"d-{number}")
                    await wiring.store.index_settled()
                    loop, process = time.thread_time() - loop, time.process_time() - process
                    wall = time.perf_counter() - wall
                    print(
                        f"  re-ingest of {len(picks)} over an index of {count}: CPU {1e3 * process / len(picks):.2f} ms "
                        f"a document, event loop {1e3 * loop / len(picks):.2f} ms, wall {1e3 * wall / len(picks):.2f} ms; "
                        f"load {os.getloadavg()[0]:.1f}"
                    )

    trio.run(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
