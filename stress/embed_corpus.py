"""Time until a real corpus is fully embedded: ingest it, then wait for the background embedder.

``python stress/embed_corpus.py [--venv V] [--mb 10] [--sources DIR]``

The corpus is python3.11-doc's reST sources (``apt-get install python3.11-doc``:
``/usr/share/doc/python3.11/html/_sources``, 1,491 files, 11 MB), sorted by path, up to
``--mb`` megabytes. It starts ``stress/real_embeddings.EmbedServer`` (all-MiniLM-L6-v2,
llama-cpp-python, the flags docs/DESIGN-NOTES.md's "Semantic recall" names), opens ctxtrio
with ``--embed-model`` pointed at it (the real wiring: ``_app.py`` starts the embedder),
ingests every file, and then waits until every chunk is embedded. Every minute it prints
how far it got, the load and the server's CPU; at the end the time from the first ingest
to fully embedded, parts (vectors) a second, server CPU seconds per part, peak RSS of
this process, the vectors file's size, and the load averages seen.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from embed_throughput import cpu_s
from real_embeddings import DEFAULT_VENV, MODEL_ALIAS, EmbedServer, ensure_gguf

from ctxtrio._app import open_context
from ctxtrio._config import Config

SOURCES = Path("/usr/share/doc/python3.11/html/_sources")


def corpus(sources: Path, limit: int) -> list[tuple[str, str]]:
    """(title, text) of the ``*.txt`` files under ``sources``, sorted by path, up to ``limit`` bytes."""
    found: list[tuple[str, str]] = []
    total = 0
    for path in sorted(sources.rglob("*.txt")):
        data = path.read_bytes()
        if total + len(data) > limit:
            break
        found.append((str(path.relative_to(sources)), data.decode("utf-8", errors="replace")))
        total += len(data)
    return found


def backlog_parser(description: str | None, mb: float) -> argparse.ArgumentParser:
    """The flags a script embedding a backlog of these sources on a one-thread server shares: --venv, --mb, --port."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the real-model venv (stress/real_server.py)")
    parser.add_argument("--mb", type=float, default=mb, help="the backlog's corpus size in megabytes")
    parser.add_argument("--port", type=int, help="the embedding server's port (default: any free one)")
    return parser


def backlog(mb: float) -> list[tuple[str, str]]:
    """``mb`` megabytes of python3.11-doc's reST sources (:func:`corpus`); exits when the package is missing."""
    if not SOURCES.is_dir():
        raise SystemExit(f"{SOURCES} not found: apt-get install python3.11-doc")
    return corpus(SOURCES, int(mb * 1e6))


async def run(server: EmbedServer, data: Path, files: list[tuple[str, str]]) -> None:
    config = Config(
        data_dir=data, llm_enabled=False, audit=False, embed_model=MODEL_ALIAS, embed_base_url=server.base_url
    )
    loads: list[float] = []
    began, server_cpu = time.perf_counter(), cpu_s(server.pid)
    async with open_context(config) as ctx:
        for title, text in files:
            await ctx.documents.ingest(text=text, title=title)
        ingested = time.perf_counter() - began
        print(f"ingested {len(files)} files in {ingested:.0f} s (load {os.getloadavg()[0]:.1f})", flush=True)
        semantic = ctx.documents.semantic
        assert semantic is not None
        shown = 0.0
        while (status := semantic.status()).state != "caught up" or status.chunks_embedded < status.chunks_total:
            await trio.sleep(2)
            loads.append(os.getloadavg()[0])
            if time.perf_counter() - shown >= 60:
                shown = time.perf_counter()
                print(
                    f"  {shown - began:5.0f} s: {status.chunks_embedded} of {status.chunks_total} chunks, "
                    f"{status.vectors} vectors, {status.state}; load {loads[-1]:.1f}, "
                    f"server CPU {cpu_s(server.pid) - server_cpu:.0f} s",
                    flush=True,
                )
        took = time.perf_counter() - began
        used = cpu_s(server.pid) - server_cpu
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = sum(len(text.encode()) for _, text in files) / 1e6
    print(
        f"{size:.2f} MB ({len(files)} files) fully embedded {took:.0f} s after the first ingest "
        f"({took - ingested:.0f} s after the last): {status.chunks_embedded} chunks, {status.vectors} vectors "
        f"({status.chunks_refused} refused), {status.vectors / (took - ingested):.1f} vectors/s after the ingest"
    )
    print(
        f"server CPU {used:.0f} s ({1000 * used / max(1, status.vectors):.0f} ms a vector); peak RSS {rss_mb:.0f} MB; "
        f"vectors file {(data / 'vectors.sqlite3').stat().st_size / 1e6:.1f} MB; load while embedding "
        f"min {min(loads, default=0):.1f} median {sorted(loads)[len(loads) // 2] if loads else 0:.1f} "
        f"max {max(loads, default=0):.1f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the real-model venv (stress/real_server.py)")
    parser.add_argument("--mb", type=float, default=10.0, help="corpus size in megabytes")
    parser.add_argument("--sources", type=Path, default=SOURCES, help="the reST sources (python3.11-doc's)")
    parser.add_argument("--threads", type=int, default=1, help="server --n_threads (1: docs/DESIGN-NOTES.md)")
    args = parser.parse_args()
    if not args.sources.is_dir():
        raise SystemExit(f"{args.sources} not found: apt-get install python3.11-doc")
    files = corpus(args.sources, int(args.mb * 1e6))
    server = EmbedServer(args.venv, ensure_gguf(args.venv, args.venv.parent / "embed"), n_threads=args.threads)
    server.start()
    try:
        print(f"load average {os.getloadavg()[0]:.2f}; server {server.base_url}, log {server.log_path}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            trio.run(run, server, Path(tmp) / "data", files)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
