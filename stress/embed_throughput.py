"""How fast the real embedding server embeds, raw and through ctxtrio's background embedder.

``python stress/embed_throughput.py [--venv V] [--threads N] [--n-batch 512 256 ...] [--parts 32]``

For each ``--n-batch`` (the server's ``--n_batch``, ``--n_ubatch`` and ``--n_ctx``) it
starts ``stress/real_embeddings.EmbedServer`` (all-MiniLM-L6-v2 as GGUF, llama-cpp-python)
and sends it ``--parts`` texts of 520 characters (~130 tokens, the embedder's part size)
cut from postgresql-doc-15's SQL reference pages:

* raw, straight to ``POST /v1/embeddings``: one request of all the parts, requests of
  4, 8 and 16 parts, and one request per part, one request at a time;
* ours: the same parts through ``Embedder.documents`` in batches of
  ``docs.embedding.BATCH_PARTS`` (what the background embedder sends).

Each line gives parts a second of wall time and the server process's CPU seconds per
part (``/proc/PID/stat``), with the load average: on this shared 2-core machine wall
time follows the load, CPU per part does not.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_embeddings import DEFAULT_VENV, MODEL_ALIAS, EmbedServer, ensure_gguf
from real_server import machine_threads

from ctxtrio.docs.embedding import BATCH_PARTS, PART_CHARS
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.embeddings import Embedder
from ctxtrio.llm.messages import LLMSettings

HTML = Path("/usr/share/doc/postgresql-doc-15/html")


def parts(count: int) -> list[str]:
    """``count`` texts of PART_CHARS characters of the SQL reference, tags and entities removed."""
    found: list[str] = []
    for page in sorted(HTML.glob("sql-*.html")):
        text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(errors="replace"))))
        found.extend(text[at : at + PART_CHARS] for at in range(0, len(text) - PART_CHARS, PART_CHARS))
        if len(found) >= count:
            return found[:count]
    raise SystemExit(f"only {len(found)} parts in {HTML}: apt-get install postgresql-doc-15")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (and its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def line(label: str, texts: int, wall: float, cpu: float) -> str:
    return (
        f"  {label:<28} {texts / wall:6.1f} parts/s, {1000 * cpu / texts:6.0f} ms server CPU a part "
        f"(load {os.getloadavg()[0]:.1f})"
    )


def raw(server: EmbedServer, pid: int, texts: list[str], per_request: int) -> tuple[float, float]:
    """Wall and server CPU seconds to embed ``texts`` in requests of ``per_request``, one at a time."""
    with httpx.Client(timeout=600.0) as client:
        wall, cpu = time.perf_counter(), cpu_s(pid)
        for at in range(0, len(texts), per_request):
            answer = client.post(
                f"{server.base_url}/embeddings", json={"model": MODEL_ALIAS, "input": texts[at : at + per_request]}
            )
            answer.raise_for_status()
        return time.perf_counter() - wall, cpu_s(pid) - cpu


async def ours(server: EmbedServer, pid: int, texts: list[str]) -> tuple[float, float]:
    """The same through Embedder.documents in batches of BATCH_PARTS, as the background embedder sends them."""
    settings = LLMSettings(server.base_url, model=MODEL_ALIAS, concurrency=2)
    async with open_llm_client(settings) as client:
        embedder = Embedder(client, MODEL_ALIAS)
        wall, cpu = time.perf_counter(), cpu_s(pid)
        for at in range(0, len(texts), BATCH_PARTS):
            await embedder.documents(texts[at : at + BATCH_PARTS])
        return time.perf_counter() - wall, cpu_s(pid) - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the real-model venv (stress/real_server.py)")
    parser.add_argument("--threads", type=int, default=None, help="server --n_threads (default: idle cores)")
    parser.add_argument("--n-batch", type=int, nargs="+", default=[512], help="server --n_batch values to try")
    parser.add_argument("--flash-attn", choices=["on", "off", "both"], default="both", help="server --flash_attn")
    parser.add_argument("--parts", type=int, default=32, help="texts of 520 characters per measurement")
    args = parser.parse_args()
    texts = parts(args.parts)
    gguf = ensure_gguf(args.venv, args.venv.parent / "embed")
    flash = {"on": [True], "off": [False], "both": [False, True]}[args.flash_attn]
    for n_batch, flash_attn in [(n, f) for n in args.n_batch for f in flash]:
        threads = args.threads or machine_threads()
        server = EmbedServer(args.venv, gguf, n_threads=threads, n_batch=n_batch, flash_attn=flash_attn)
        server.start()
        try:
            pid = server.pid
            raw(server, pid, texts[:4], 4)  # warm up: model pages, first allocations
            print(f"n_batch = n_ubatch = n_ctx = {n_batch}, flash_attn {flash_attn}, {threads} thread(s):", flush=True)
            for per_request in (len(texts), 16, 8, 4, 1):
                wall, cpu = raw(server, pid, texts, per_request)
                print(line(f"raw, {per_request} a request", len(texts), wall, cpu), flush=True)
            wall, cpu = trio.run(ours, server, pid, texts)
            print(line(f"ours (Embedder, {BATCH_PARTS} a request)", len(texts), wall, cpu), flush=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
