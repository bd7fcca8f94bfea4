"""A team's loopback HTTP service with semantic recall on: searches beside ingests and the embedder's passes.

Builds once (``--dir``, kept) a data dir of ``--docs`` documents (``scale.Corpus``, 2 KB, ingested by
``ctxtrio ingest``) and a vectors file of ``--rows`` rows keyed to their journals (``--dim``
dimensions, random vectors: the server's pass finds every chunk embedded), then, on a fresh copy
per run, spawns ``ctxtrio --http --embed-model`` with an embedding endpoint that is a **fake**
(``testkit/fake_embeddings.py``, served over loopback HTTP, as the tests serve it). Once a search
answers by meaning, for ``--seconds``: ``--ingesters`` clients ingest new documents (each commit
moves the catalog and wakes the embedder: it embeds them through the fake, and each pass that
starts walks every row of the vectors file), ``--searchers`` clients call ``doc_search``
(2-3 words, budget 2,000, limit 5), all with the official SDK client. Prints:

* doc_search p50 / p99 / max, and how many answered by keyword and why;
* the event loop's steps (a ``trio.abc.Instrument`` in the server process timing each, wall and the
  loop thread's CPU; a long step delays every request meanwhile): the longest, the time by task,
  and the garbage collector's full passes;
* time in the vectors file's methods and in ``Repository.current_journals`` (each call's wall time;
  the vectors' in the server's worker threads): ``nearest_in_memory`` is a search's scan, which
  waited for the file's lock while the embedder's walks (``tally``, ``collect``) held it.

The server's figures count from the first search answered by meaning (the script sends it
SIGUSR1 then): the start, the catalog's replay and the matrix's read are not in them.
Wall times follow the machine's load (printed); the CPU column does not.

The server is the CLI's own ``main`` (``--tree``: another checkout's), run by this script with
``--watched STATS`` so the instrument sits in its trio loop::

    nice -n 10 python stress/busy_search.py [--docs 20000] [--rows 600000] [--seconds 60] [--tree PATH]

(The first run builds the data: about 4 minutes at load 10, 570 MB under /tmp.)
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from _gc_passes import GcPasses, census

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[1]
_TIMED = ("open", "nearest_in_memory", "tally", "drop_except", "drop_journals", "add", "known", "load", "collect")


class ServerStats(TypedDict):
    """What the server process writes to its STATS file as it exits (:func:`_watched`), read back by :func:`_run`.
    Pairs are JSON arrays when read back: they are only unpacked."""

    steps: int
    busy_s: float
    cpu_s: float
    over: dict[str, int]  # steps longer than each limit (seconds, as the JSON key)
    longest: list[tuple[float, str]]  # (seconds, task name), longest first
    by_task: list[tuple[float, str]]  # (seconds in all, task name), busiest first
    gc2: list[float]  # the longest full garbage collections (seconds); gc2_count: how many there were
    gc2_count: int
    gc2_cpu: list[float]  # every full collection's CPU (seconds), longest first
    census: dict[str, dict[str, object]]  # _gc_passes.census() at the timed phase's "start" and "end"
    calls: dict[str, tuple[int, float, float]]  # timed method -> (calls, seconds in all, longest call's seconds)
    rebuilds: list[float]  # the longest ``current_journals`` calls (seconds)


class Seen(TypedDict):
    """One run's figures: the clients' (this process) and the server's."""

    ready_s: float
    latencies: list[float]
    why: dict[str, int]  # why a search answered by keyword -> how often
    ingested: int
    server: ServerStats


class LoopWatch(trio.abc.Instrument):
    """Times every task step on the event loop (a long one delays every request meanwhile): wall time, and the
    loop thread's CPU time (what the code costs, whatever else the machine runs)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.began = 0.0
        self.began_cpu = 0.0
        self.steps = 0
        self.busy_s = 0.0
        self.cpu_s = 0.0
        self.longest: list[tuple[float, str]] = []
        self.over = {0.01: 0, 0.05: 0, 0.1: 0}
        #: Task name -> seconds its steps took in all.
        self.by_task: dict[str, float] = {}

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.began, self.began_cpu = time.perf_counter(), time.thread_time()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        took = time.perf_counter() - self.began
        self.steps += 1
        self.busy_s += took
        self.cpu_s += time.thread_time() - self.began_cpu
        self.by_task[task.name] = self.by_task.get(task.name, 0.0) + took
        for limit in self.over:
            if took > limit:
                self.over[limit] += 1
        if took > 0.005:
            self.longest.append((took, task.name))
            if len(self.longest) > 200:
                self.longest = sorted(self.longest, reverse=True)[:20]


def _timed(cls: type, name: str, into: dict[str, list[float]]) -> None:
    """Wrap ``cls.name`` to record each call's wall time in ``into[name]`` (a diagnostic of this script only)."""
    method: Callable[..., object] | None = getattr(cls, name, None)
    if method is None:
        return
    calls = into.setdefault(name, [])

    def wrapper(*args: object, **kwargs: object) -> object:
        began = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            calls.append(time.perf_counter() - began)

    setattr(cls, name, wrapper)


def _watched(stats: Path, argv: list[str]) -> int:
    """Run ``ctxtrio`` (the CLI's main, this process's tree) with a LoopWatch in its trio loop; write ``stats``."""
    from ctxtrio import _cli
    from ctxtrio.docs.repository import Repository
    from ctxtrio.store.vectors import VectorStore

    watch = LoopWatch()
    calls: dict[str, list[float]] = {}
    for name in _TIMED:
        _timed(VectorStore, name, calls)
    _timed(Repository, "current_journals", calls)
    passes = GcPasses()

    def reset(signum: int, frame: object) -> None:  # SIGUSR1: the parent's timed phase begins
        passes.reset()
        watch.reset()
        for each in calls.values():
            each.clear()

    signal.signal(signal.SIGUSR1, reset)
    run = trio.run

    def watched_run(*args: object, **kwargs: object) -> object:
        kwargs["instruments"] = [watch]
        return run(*args, **kwargs)  # type: ignore[arg-type]  # (trio.run's own signature, passed through)

    trio.run = watched_run  # type: ignore[assignment]  # (the CLI calls trio.run; this process only)
    profile = cProfile.Profile() if os.environ.get("BUSY_PROFILE") else None
    try:
        if profile is None:
            return _cli.main(argv)
        return profile.runcall(_cli.main, argv)  # (the event loop's thread only: not the workers')
    finally:
        if profile is not None:
            profile.dump_stats(os.environ["BUSY_PROFILE"])
        longest = sorted(watch.longest, reverse=True)[:12]
        summary: ServerStats = {
            "steps": watch.steps,
            "busy_s": watch.busy_s,
            "cpu_s": watch.cpu_s,
            "over": {str(k): v for k, v in watch.over.items()},
            "longest": longest,
            "by_task": sorted(((t, n) for n, t in watch.by_task.items()), reverse=True)[:8],
            "gc2": sorted(passes.wall, reverse=True)[:5],
            "gc2_count": len(passes.wall),
            "gc2_cpu": sorted(passes.cpu, reverse=True),
            "census": {**passes.census, "end": census()},
            "calls": {k: (len(v), sum(v), max(v, default=0.0)) for k, v in calls.items()},
            "rebuilds": sorted(calls.get("current_journals", []), reverse=True)[:5],
        }
        stats.write_text(json.dumps(summary))


async def _build(folder: Path, docs: int, rows: int, dim: int, model: str) -> Path:
    """The data dir (built once, then kept): ``docs`` documents and ``rows`` vector rows of their journals."""
    from scale import Corpus, write_files

    from ctxtrio._app import open_context
    from ctxtrio._config import Config
    from ctxtrio.docs.service import repository_of
    from ctxtrio.store.vectors import VectorRow, VectorStore

    data = folder / "data"
    if (folder / "built").exists():
        return data
    shutil.rmtree(folder, ignore_errors=True)
    files = folder / "files"
    await trio.to_thread.run_sync(write_files, Corpus(2048), files, 0, docs)
    command = [sys.executable, "-m", "ctxtrio", "ingest", str(files), "--data-dir", str(data), "--no-llm", "--json"]
    await trio.run_process(command, cwd=ROOT, capture_stdout=True)
    async with open_context(Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        await repository_of(ctx.documents).refresh()
        journals = sorted(repository_of(ctx.documents).current_journals())
        path = ctx.data.vectors_path
    rng = random.Random(docs)
    store = VectorStore(path)
    store.open()
    each = max(1, rows // len(journals))
    for journal in journals:
        vectors = [[rng.gauss(0, 1) for _ in range(dim)] for _ in range(each)]
        batch = [VectorRow(journal, str(n // 3), n % 3, 0, 1, v) for n, v in enumerate(vectors)]
        store.add(model, dim, batch)
    store.close()
    shutil.rmtree(files)
    (folder / "built").touch()
    return data


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def _skipped(text: str) -> str | None:
    """Why a search answered by keyword only (render.py's "Keyword search only: ..."), None if it did not."""
    mark = "Keyword search only: "
    return text.split(mark, 1)[1].split(".", 1)[0] if mark in text else None


async def _spawn(args: argparse.Namespace, data: Path, url: str, stats: Path) -> tuple[trio.Process, str]:
    """Start the watched server on ``data`` (stderr to server.log beside it); the process and its MCP URL."""
    command = [sys.executable, str(Path(__file__).resolve()), "--watched", str(stats), "--http", "--port", "0"]
    command += ["--data-dir", str(data), "--no-llm", "--no-audit", "--embed-model", args.model, "--embed-base-url", url]
    env = {**os.environ, "PYTHONPATH": str(args.tree.resolve())}
    if args.profile is not None:
        env["BUSY_PROFILE"] = str(args.profile.resolve())
    with (data.parent / "server.log").open("wb") as log:
        process = await trio.lowlevel.open_process(command, stdin=subprocess.DEVNULL, stderr=log, env=env)
    server = ""
    with trio.fail_after(120):
        while not server:
            await trio.sleep(0.2)
            said = (data.parent / "server.log").read_text(errors="replace")
            if "ready: MCP over HTTP at " in said:
                server = said.split("ready: MCP over HTTP at ", 1)[1].split()[0].rstrip(",")
            elif process.returncode is not None:
                raise RuntimeError(said)
    server = server.removesuffix("/mcp") + "/mcp"
    return process, server


async def _run(args: argparse.Namespace, data: Path, url: str) -> Seen:
    from mcp import Client
    from scale import Corpus

    from testkit.results import text_of

    stats = data.parent / "stats.json"
    process, server = await _spawn(args, data, url, stats)
    corpus, rng = Corpus(2048), random.Random(3)
    began = time.perf_counter()
    async with Client(server) as session:
        while True:  # the matrix read and the first pass's walks: not timed
            result = await session.call_tool("doc_search", {"query": corpus.marker(7), "limit": 5})
            if _skipped(text_of(result)) is None:
                break
            await trio.sleep(0.5)
    ready_s = time.perf_counter() - began
    process.send_signal(signal.SIGUSR1)  # (the server's figures count from here)
    latencies: list[float] = []
    why: dict[str, int] = {}
    ingested = [0]
    stop = trio.current_time() + args.seconds

    async def ingester(first: int) -> None:
        async with Client(server) as session:
            number = first
            while trio.current_time() < stop:
                text = corpus.document(number)
                await session.call_tool("doc_ingest", {"text": text, "doc_id": f"new-{number:06d}"})
                ingested[0] += 1
                number += args.ingesters

    async def searcher() -> None:
        async with Client(server) as session:
            while trio.current_time() < stop:
                query = " ".join(rng.choices(corpus.words, k=rng.randint(2, 3)))
                sent = time.perf_counter()
                result = await session.call_tool("doc_search", {"query": query, "budget_tokens": 2000, "limit": 5})
                latencies.append(time.perf_counter() - sent)
                reason = "error" if result.is_error else _skipped(text_of(result))
                if reason is not None:
                    why[reason] = why.get(reason, 0) + 1

    async with trio.open_nursery() as nursery:
        for n in range(args.ingesters):
            nursery.start_soon(ingester, args.docs + n)
        for _ in range(args.searchers):
            nursery.start_soon(searcher)
    process.terminate()
    with trio.move_on_after(60):
        await process.wait()
    if process.returncode is None:  # (not left running after this script; it writes STATS only as it exits)
        process.kill()
        await process.wait()
        raise SystemExit(f"the server (pid {process.pid}) did not stop within 60 s of SIGTERM: killed, no figures")
    figures: ServerStats = json.loads(stats.read_text())  # (written by _watched, from a ServerStats)
    return {"ready_s": ready_s, "latencies": latencies, "why": why, "ingested": ingested[0], "server": figures}


def _report(seen: Seen) -> None:
    ms = [1000 * x for x in seen["latencies"]]
    print(
        f"ready {seen['ready_s']:.1f} s; {len(ms)} doc_search: p50 {_percentile(ms, 0.5):.0f} ms,"
        f" p99 {_percentile(ms, 0.99):.0f} ms, max {max(ms, default=0):.0f} ms; {seen['ingested']} ingests;"
        f" by keyword: {seen['why'] or 'none'}"
    )
    server = seen["server"]
    print(
        f"event loop: {server['steps']} steps, {server['busy_s']:.1f} s busy"
        f" ({server['cpu_s']:.1f} s CPU); steps over 10/50/100 ms:"
        f" {server['over']}; longest: "
        + ", ".join(f"{1000 * t:.0f} ms {name.rsplit('.', 1)[-1]}" for t, name in server["longest"][:8])
    )
    print("event loop by task: " + ", ".join(f"{name.rsplit('.', 1)[-1]} {t:.1f} s" for t, name in server["by_task"]))
    print(f"gc full passes: {server['gc2_count']}, longest {[round(1000 * x) for x in server['gc2']]} ms")
    cpu = [round(1000 * x) for x in server["gc2_cpu"]]
    print(f"gc full passes' CPU: {sum(cpu)} ms in all, each {cpu} ms; census: {server['census']}")
    rebuilds = [round(1000 * x, 1) for x in server["rebuilds"]]
    print(f"current_journals: longest calls {rebuilds} ms")
    for name, (count, total, longest) in server["calls"].items():
        print(f"  VectorStore/Repository.{name}: {count} calls, {total:.2f} s, longest {1000 * longest:.0f} ms")


async def _main(args: argparse.Namespace) -> int:
    from testkit.fake_embeddings import FakeEmbeddings, serve_fake_embeddings

    fake = FakeEmbeddings(dimension=args.dim)
    args.model = fake.model
    template = await _build(args.dir, args.docs, args.rows, args.dim, fake.model)
    print(
        f"data: {args.docs} documents, {args.rows} vector rows of {args.dim} dimensions; load {os.getloadavg()[0]:.1f}"
    )
    async with trio.open_nursery() as nursery:
        url = await serve_fake_embeddings(nursery, fake)
        for run in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="busy_search-") as temp:
                data = Path(temp) / "data"
                await trio.to_thread.run_sync(shutil.copytree, template, data)
                seen = await _run(args, data, url)
                print(f"run {run + 1} (tree {args.tree}; load {os.getloadavg()[0]:.1f}):")
                _report(seen)
        nursery.cancel_scope.cancel()
    return 0


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--watched":
        return _watched(Path(sys.argv[2]), sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--rows", type=int, default=600_000)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--ingesters", type=int, default=4)
    parser.add_argument("--searchers", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--profile", type=Path, help="cProfile the server's event-loop thread into this file")
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout the server runs (default: this one)")
    parser.add_argument(
        "--dir", type=Path, default=None, help="where the data is built once (default /tmp/busy_search-DOCS-ROWS)"
    )
    args = parser.parse_args()
    if args.dir is None:
        args.dir = Path(f"/tmp/busy_search-{args.docs}-{args.rows}-{args.dim}")
    return trio.run(_main, args)


if __name__ == "__main__":
    raise SystemExit(main())
