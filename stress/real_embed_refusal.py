"""An embedding input longer than the server's batch, against the real servers: what they answer, what ctxtrio does.

::

    python stress/real_embed_refusal.py                                  # llama-cpp-python's server only
    python stress/real_embed_refusal.py --llama-server BUILD/bin/llama-server

all-MiniLM-L6-v2 as GGUF (``real_embeddings.ensure_gguf``). For each server: the HTTP answer to
three over-long inputs (520 characters of a psql table's rule, the rule led by a heading trail, 605
Chinese characters: one BERT token a character), the first parts ctxtrio cuts of the table and the
Chinese text, and one word, with ``testkit.fake_embeddings.bert_tokens``'
count beside; then ctxtrio's client on a batch holding one of them (the error, the breaker after it, the
next request). With ``--llama-server`` (llama.cpp's C++ server; build it from the llama.cpp that
llama-cpp-python's sdist vendors: ``cmake -S vendor/llama.cpp -B build -G Ninja -DLLAMA_OPENSSL=OFF
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF && ninja -C build
llama-server``), also end to end: ctxtrio's stdio server with ``--embed-model`` embeds a 40-section
manual and 40 notes, one psql table in each (``stress/attacks/vectors.py``'s), then starts again;
it prints both semantic-recall lines of ``context_guide`` and how often llama-server refused. Then
the same manual and notes on a llama-server started with ``--ubatch-size 256`` (the table's parts,
cut to 512 tokens by ``text/wordpiece.py``, are refused), started again with its default batch
(nothing is asked again: a refusal is kept), ``ctxtrio doctor --repair`` (it forgets the refusals)
and one more start (the table is embedded).
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import httpx
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from attacks import stdio_server
from attacks._store_kit import call
from attacks.vectors import RULE, TABLE, counts, fill, semantic_lines, settled_or_none
from real_embeddings import DEFAULT_VENV, MODEL_ALIAS, EmbedServer, ensure_gguf
from real_server import free_port

from ctxtrio._errors import LLMError
from ctxtrio.llm.client import open_llm_client
from ctxtrio.llm.embeddings import Embedder
from ctxtrio.llm.messages import LLMSettings
from ctxtrio.text.embedding import text_parts
from testkit.fake_embeddings import FakeEmbeddings, bert_tokens

if TYPE_CHECKING:
    from collections.abc import Iterator

INPUTS = {
    "520 characters of a table rule": RULE[:520],
    "the rule led by its trail 'Quolls › Quoll 7'": f"Quolls › Quoll 7\n{RULE[:520]}",
    "605 Chinese characters": "机器学习模型的输入太长" * 55,
    "the table's first part as ctxtrio cuts it": text_parts(TABLE, ("Quolls", "Quoll 7"))[0].text,
    "the Chinese text's first part as ctxtrio cuts it": text_parts("机器学习模型的输入太长" * 55)[0].text,
    "one word": "probe",
}


def answers(base: str) -> Iterator[str]:
    """One line per input: its length, the fake's token count, the server's status and body."""
    for name, text in INPUTS.items():
        response = httpx.post(f"{base}/embeddings", json={"input": [text], "model": MODEL_ALIAS}, timeout=120)
        body = response.text[:300]
        if response.status_code == 200:
            payload = response.json()
            body = f"{len(payload['data'])} vector of {len(payload['data'][0]['embedding'])}, usage {payload['usage']}"
        yield f"{name}: {len(text)} characters, {bert_tokens(text)} by bert_tokens -> HTTP {response.status_code}: {body}"


async def through_ctxtrio(base: str) -> list[str]:
    """ctxtrio's client on ["fine", the trailed rule], then on ["fine"]."""
    said: list[str] = []
    async with open_llm_client(LLMSettings(base, model=MODEL_ALIAS)) as client:
        embedder = Embedder(client, MODEL_ALIAS)
        try:
            got = await embedder.documents(["fine", INPUTS["the rule led by its trail 'Quolls › Quoll 7'"]])
            said.append(f"{len(got)} vectors; breaker {embedder.breaker_state}")
        except LLMError as exc:
            said.append(f"{type(exc).__name__}: {exc}; breaker {embedder.breaker_state}")
        started = trio.current_time()
        try:
            await embedder.documents(["fine"])
            said.append(f"next request answered in {trio.current_time() - started:.2f} s")
        except LLMError as exc:
            said.append(f"next request: {type(exc).__name__}: {exc}")
    return said


async def end_to_end(work: Path, base: str, log: Path, runs: tuple[str, ...]) -> list[str]:
    """The manual and notes through ctxtrio's stdio server, once a run; what context_guide says each time."""
    embed = ("--embed-model", MODEL_ALIAS, "--embed-base-url", base)
    lines: list[str] = []
    for run in runs:
        started = time.monotonic()
        async with stdio_server(work / "data", *embed) as client:
            if run.startswith("first start"):
                await fill(client)
            done = await settled_or_none(client, FakeEmbeddings())  # (an endpoint of its own: nothing to wait out)
            states = await semantic_lines(client) if done is None else None
            _, found = await call(client, "doc_search", query="quoll 39 seen near the creek")
        refused = log.read_text(errors="replace").count("too large to process")
        lines.append(
            f"{run} ({time.monotonic() - started:.0f} s): {counts(done)}; llama-server refused {refused} tasks"
        )
        lines.extend(f"  {line.strip()}" for line in states or ())
        lines.append(f"  doc_search: {found.splitlines()[0][:160]}")
    return lines


@contextlib.contextmanager
def served(binary: Path, gguf: Path, work: Path, *extra: str) -> Iterator[tuple[str, Path]]:
    """llama-server on all-MiniLM-L6-v2 (``extra``: its further flags) while inside: its base URL and log."""
    port = free_port()
    log = work / f"llama-server-{port}.log"
    command = [str(binary), "-m", str(gguf), "--embeddings", "--host", "127.0.0.1", "--port", str(port)]
    command += ["-a", MODEL_ALIAS, "-t", "1", *extra]
    print(f"llama.cpp's llama-server: {' '.join(command[1:])}")
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not _healthy(f"http://127.0.0.1:{port}/health"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"llama-server did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1", log
    finally:
        process.terminate()
        process.wait(timeout=30)


def llama_server(binary: Path, gguf: Path, work: Path) -> None:
    """Its defaults: the raw answers, ctxtrio's client, and the manual and notes embedded, twice."""
    with served(binary, gguf, work / "defaults") as (base, log):
        _say([*answers(base), *trio.run(through_ctxtrio, base)])
        _say(trio.run(end_to_end, work / "defaults", base, log, ("first start", "started again")))


def refused_then_repaired(binary: Path, gguf: Path, work: Path) -> None:
    """Started with a batch of 256, llama-server refuses the table's parts (up to 512 tokens); started again
    with its default (512), it is asked none of them; ``ctxtrio doctor --repair``; the next start embeds them (a running
    server would too: tests/store/test_vector_refusal.py)."""
    with served(binary, gguf, work, "--ubatch-size", "256") as (base, log):
        _say(trio.run(end_to_end, work, base, log, ("first start (--ubatch-size 256)",)))
    with served(binary, gguf, work) as (base, log):
        _say(trio.run(end_to_end, work, base, log, ("started again (the server's default batch)",)))
        embed = ["--embed-model", MODEL_ALIAS, "--embed-base-url", base, "--no-llm"]
        command = [sys.executable, "-m", "ctxtrio", "doctor", "--repair", "--data-dir", str(work / "data"), *embed]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        print(f"  ctxtrio doctor --repair: exit {done.returncode}")
        _say([line for line in done.stdout.splitlines() if "embedd" in line])
        _say(trio.run(end_to_end, work, base, log, ("started after doctor --repair",)))


def _say(lines: list[str]) -> None:
    for line in lines:
        print(f"  {line}", flush=True)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="llama-cpp-python's venv")
    parser.add_argument("--llama-server", type=Path, help="a built llama-server binary")
    args = parser.parse_args(argv)
    gguf = ensure_gguf(args.venv, Path("~/.cache/ctxtrio-realmodel/embed").expanduser())
    server = EmbedServer(args.venv, gguf)
    print("llama-cpp-python's server (real_embeddings.EmbedServer: n_ctx = n_batch = n_ubatch = 512):")
    server.start()
    try:
        _say([*answers(server.base_url), *trio.run(through_ctxtrio, server.base_url)])
    finally:
        server.stop()
    if args.llama_server is not None:
        with tempfile.TemporaryDirectory(prefix="ctxtrio-refusal-") as work:
            (Path(work) / "defaults").mkdir()
            llama_server(args.llama_server, gguf, Path(work))
            refused_then_repaired(args.llama_server, gguf, Path(work))


if __name__ == "__main__":
    main(sys.argv[1:])
