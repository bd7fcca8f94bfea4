"""What a host waits for when ctxtrio starts on a big vectors file: the first answers over stdio.

Builds (once, then kept) a data dir of DOCS small documents and a vectors file of 600,000 rows
for them (DOCS x ITEMS x 3 parts, 8 dimensions, as ``stress/vector_moves.py``'s file, but keyed to
the documents' real journals, so the server's pass drops none of them and finds nothing to
embed), then spawns ``python -m ctxtrio --embed-model`` on a fresh copy of it, RUNS times,
with a fake embedding endpoint (``testkit/fake_embeddings.py``, served over loopback HTTP)
answering 8 dimensions. It sends ``initialize``, ``tools/list``, ``context_guide`` and
``doc_search`` at once (as a host that starts a server and asks it right away), then a
``doc_search`` every 0.2 s until one is answered by meaning, and prints seconds from the
spawn to:

* ``list``: the ``tools/list`` answer (the warm start answers it before the server is wired:
  a first spawn records the answers, ``transport/warm_start.py``);
* ``status``: the first tool call's answer (``context_guide``), and the semantic state it gives;
* ``search``: the first ``doc_search`` answer, and why it searched by keyword if it did;
* ``meaning``: the first ``doc_search`` answered by meaning (its vector asked, the matrix read);
* ``slowest``: the longest any ``doc_search`` took from its sending to its answer.

``--first`` drops the ``rows_digest`` index from each copy: the first start after 9b7a7ae,
which makes it (notes/rv27-27.md item 13). ``--tree`` spawns another checkout (the
before column: ``--tree /tmp/before``, a worktree of the commit before)::

    nice -n 10 python stress/start_vectors.py [--runs 3] [--first] [--tree PATH] [--dir /tmp/start_vectors]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

from ctxtrio._app import open_context
from ctxtrio._config import Config
from ctxtrio.docs.service import repository_of
from ctxtrio.store.vectors import VectorRow, VectorStore
from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings

ROOT = Path(__file__).resolve().parents[1]
DOCS, ITEMS, PARTS, DIM = 100, 2_000, 3, 8
FAKE = FakeEmbeddings(dimension=DIM)
QUERY = "section words alpha7"


async def _build(folder: Path) -> Path:
    """The data dir (built once): DOCS documents, and DOCS x ITEMS x PARTS rows of their journals."""
    data = folder / "data"
    if (folder / "built").exists():
        return data
    shutil.rmtree(folder, ignore_errors=True)
    config = Config(data_dir=data, llm_enabled=False, audit=False)
    async with open_context(config) as ctx:
        for n in range(DOCS):
            await ctx.documents.ingest(text=f"# Doc {n}\n\nSection {n} words alpha{n} beta{n}.\n", title=f"d{n}")
        journals = sorted(repository_of(ctx.documents).current_journals())
        path = ctx.data.vectors_path
    rng = random.Random(DOCS)
    store = VectorStore(path)
    store.open()
    for journal in journals:
        rows = [
            VectorRow(journal, str(item), part, 0, 1, [rng.random() for _ in range(DIM)])
            for item in range(ITEMS)
            for part in range(PARTS)
        ]
        store.add(FAKE.model, DIM, rows)
    store.close()
    (folder / "built").touch()
    return data


def _message(n: int, method: str, params: dict[str, object] | None = None) -> bytes:
    body: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if n:
        body["id"] = n
    if params is not None:
        body["params"] = params
    return (json.dumps(body) + "\n").encode()


def _call(n: int, tool: str, arguments: dict[str, object]) -> bytes:
    return _message(n, "tools/call", {"name": tool, "arguments": arguments})


_INIT: dict[str, object] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "start-vectors", "version": "0"},
}


def _text(message: dict[str, object]) -> str:
    result = message.get("result")
    assert isinstance(result, dict), message
    return "".join(part.get("text", "") for part in result.get("content", []))


def _skipped(text: str) -> str | None:
    """Why a search answer searched by keyword only (render.py's "Keyword search only: ..."), None if it did not."""
    mark = "Keyword search only: "
    return text.split(mark, 1)[1].split(".", 1)[0] if mark in text else None


async def _spawn(tree: Path, data: Path, url: str, cache: Path) -> dict[str, object]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", "ctxtrio", "--no-llm", "--no-audit", "--data-dir", str(data)]
    command += ["--embed-model", FAKE.model, "--embed-base-url", url]
    seen: dict[str, object] = {}
    started = time.perf_counter()
    process = await trio.lowlevel.open_process(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=data.parent
    )
    assert process.stdin is not None and process.stdout is not None
    first = _message(1, "initialize", _INIT) + _message(0, "notifications/initialized") + _message(2, "tools/list")
    first += _call(3, "context_guide", {}) + _call(4, "doc_search", {"query": QUERY})
    await process.stdin.send_all(first)
    buffer, asked, sent = b"", 4, {4: 0.0}
    seen["slowest"] = 0.0
    with trio.move_on_after(120):
        while "meaning" not in seen:
            chunk = await process.stdout.receive_some()
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                at = time.perf_counter() - started
                if message.get("id") == 2:
                    seen["list"] = at
                elif message.get("id") == 3:
                    said = _text(message)
                    said = said[said.find("semantic recall:") :].split("\n", 1)[0]
                    seen["status"], seen["state"] = at, said.rsplit("; ", 1)[-1]
                elif isinstance(message.get("id"), int) and int(message["id"]) >= 4:
                    skipped = _skipped(_text(message))
                    seen["slowest"] = max(float(str(seen["slowest"])), at - sent[int(message["id"])])
                    if message["id"] == 4:
                        seen["search"], seen["why"] = at, skipped
                    if skipped is None:
                        seen["meaning"] = at
                    else:
                        await trio.sleep(0.2)
                        asked += 1
                        sent[asked] = time.perf_counter() - started
                        await process.stdin.send_all(_call(asked, "doc_search", {"query": QUERY}))
    await process.stdin.aclose()
    with trio.move_on_after(30):
        await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()
    return seen


async def _main(args: argparse.Namespace) -> int:
    folder: Path = args.dir
    template = await _build(folder)
    rows = DOCS * ITEMS * PARTS
    mode = "first start after 9b7a7ae (index made)" if args.first else "a later start (index there)"
    print(f"{rows:,} rows, {DIM} dimensions, {DOCS} documents; tree {args.tree}; {mode}")
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="start-vectors-") as work:
        data, cache = Path(work) / "data", Path(work) / "cache"
        async with trio.open_nursery() as nursery:
            url = await serve_fake_embeddings(nursery, FAKE)
            for run in range(args.runs + 1):  # the first records the warm start's answers
                shutil.rmtree(data, ignore_errors=True)
                shutil.copytree(template, data)
                if args.first:
                    with sqlite3.connect(data / "vectors.sqlite3") as conn:
                        conn.execute("DROP INDEX IF EXISTS rows_digest")
                seen = await _spawn(args.tree.resolve(), data, url, cache)
                label = "warm-up" if run == 0 else f"spawn {run}"
                print(
                    f"{label}: list {seen.get('list', -1):.2f} s, status {seen.get('status', -1):.2f} s"
                    f" ({seen.get('state')}), search {seen.get('search', -1):.2f} s ({seen.get('why') or 'by meaning'}),"
                    f" meaning {seen.get('meaning', -1):.2f} s, slowest search {seen.get('slowest', -1):.2f} s; load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                if run:
                    results.append(seen)
            nursery.cancel_scope.cancel()
    if not results or any(key not in seen for seen in results for key in ("list", "status", "search", "meaning")):
        return 1
    medians = {
        key: statistics.median(float(str(seen[key])) for seen in results)
        for key in ("list", "status", "search", "meaning")
    }
    print("median: " + ", ".join(f"{key} {value:.2f} s" for key, value in medians.items()))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--first", action="store_true", help="drop rows_digest first (the first start after 9b7a7ae)")
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout spawned (default: this one)")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/start_vectors"))
    return trio.run(_main, parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
