"""A team's loopback HTTP service with a real embedder: concurrent ingest and search through faults.

``python stress/team_http.py [--seconds 300] [--tail 90] [--file-clients 6]``

What a team running ``ctxtrio --http`` for its scripts does to it, with real text: it starts
``stress/real_embeddings.EmbedServer`` (all-MiniLM-L6-v2 on llama-cpp-python, 1 thread) and
``ctxtrio --http --embed-model ...`` on fixed loopback ports (clients reconnect to the same URL
after a restart), then runs, all with the official SDK client:

* ``--file-clients`` ingesting python3.11-doc's reST sources and git-doc's ``*.txt`` by
  ``file_path``, two ingesting nodejs-doc's markdown (``/work/data/node-api``) as ``text``, one
  editing copies of stdlib modules and ingesting each again, ``--searchers`` calling
  ``doc_search`` with questions in users' words, one reading ``doc_window``s, and one polling
  ``context_status`` (the embedding line) and the server's RSS every second;
* faults, at shares of ``--seconds``: the embedder SIGKILLed at 0.2 and started again 15 s
  later; the server SIGTERMed at 0.35 and started again; SIGKILLed at 0.5 and started again; a
  second server on the same data dir from 0.6 (one client ingesting, one searching through
  it); at 0.7 a client leaving in the middle of a 1.3 MB ingest, twice.

A client whose call fails notes what it saw, waits for ``/health`` and calls again (an
ingest is retried). After ``--tail`` more seconds of searching, both servers get SIGTERM and
the data dir is opened with the library: every acknowledged document must hold the text of
its last acknowledgement, or of an ingest attempted after it (in flight at a kill). Prints
the acknowledged MB and MB/s, search and window p50/p95, why searches went without meaning,
the embedding progress, peak RSS, every error a client saw, and what was lost. Exits 1 on
any loss. Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Server, healthy
from real_embeddings import DEFAULT_VENV, MODEL_ALIAS, EmbedServer, ensure_gguf
from real_server import free_port

from ctxtrio._app import open_context
from ctxtrio._config import Config
from testkit.results import text_of

PY_DOCS = Path("/usr/share/doc/python3.11/html/_sources")
GIT_DOCS = Path("/usr/share/doc/git-doc")
NODE = Path("/work/data/node-api")
QUERIES = [
    "how do I read a file line by line",
    "run a command and capture its output",
    "parse command line arguments",
    "undo the last commit",
    "merge two branches without a fast forward",
    "read environment variables",
    "format a date as a string",
    "stream data from a file without loading it into memory",
    "compare two lists for differences",
    "rewrite history interactively",
    "write a unit test that checks an exception",
    "start a child process and read what it prints",
]
#: A job: (the key acknowledgements are kept under until the doc_id is known, arguments, SHA-256, bytes).
Job = tuple[str, dict[str, object], str, int]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def said(exc: BaseException) -> str:
    """What a client saw: the leaves of an exception group, each as 'Type: message'."""
    if isinstance(exc, BaseExceptionGroup):
        return " | ".join(said(inner) for inner in exc.exceptions)
    return f"{type(exc).__name__}: {str(exc)[:160]}"


@dataclass
class Ledger:
    """What the clients were told, and when (seconds from the start)."""

    t0: float = field(default_factory=time.time)
    acked: dict[str, list[tuple[float, str, int]]] = field(default_factory=dict)
    attempted: dict[str, list[tuple[float, str]]] = field(default_factory=dict)
    errors: list[tuple[float, str, str]] = field(default_factory=list)
    acked_bytes: int = 0
    #: (seconds, bytes acknowledged) when every bulk ingester had its documents acknowledged.
    bulk: tuple[float, int] | None = None
    searches: list[tuple[float, float, str | None]] = field(default_factory=list)
    windows: list[float] = field(default_factory=list)
    embedded: list[tuple[float, int, int, str]] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)

    def now(self) -> float:
        return time.time() - self.t0

    def event(self, what: str) -> None:
        print(f"[{self.now():6.1f}] {what}", flush=True)

    def error(self, who: str, what: str) -> None:
        self.errors.append((self.now(), who, what))
        self.event(f"{who} saw {what[:240]}")


async def ingester(who: str, server: Server, jobs: list[Job], ledger: Ledger, stop: trio.Event) -> None:
    """Ingest ``jobs`` in order; a call that fails is noted and made again once the server answers."""
    pending = list(jobs)
    while pending and not stop.is_set():
        try:
            async with Client(server.url) as client:
                while pending and not stop.is_set():
                    key, arguments, digest, size = pending[0]
                    ledger.attempted.setdefault(key, []).append((ledger.now(), digest))
                    result = await client.call_tool("doc_ingest", arguments)
                    content = result.structured_content
                    if result.is_error or not isinstance(content, dict):
                        ledger.error(who, f"{key}: {text_of(result)}")
                        await trio.sleep(1)
                        continue
                    doc_id = str(content["doc_id"])
                    ledger.acked.setdefault(doc_id, []).append((ledger.now(), digest, int(content["chunks"])))
                    ledger.acked_bytes += size
                    if doc_id != key:  # a file's doc_id: its attempts go under it
                        ledger.attempted.setdefault(doc_id, []).extend(ledger.attempted.pop(key))
                    pending.pop(0)
        except Exception as exc:  # noqa: BLE001  (what the client saw is the measurement)
            ledger.error(who, f"{pending[0][0]}: {said(exc)}")
            await healthy(server.port)


async def bulk_ingest(server: Server, clients: list[tuple[str, list[Job]]], ledger: Ledger, stop: trio.Event) -> None:
    """The ingesting clients at once (``clients``: each one's name and jobs); notes when all are done."""
    async with trio.open_nursery() as nursery:
        for who, jobs in clients:
            nursery.start_soon(ingester, who, server, jobs, ledger, stop)
    ledger.bulk = (ledger.now(), ledger.acked_bytes)
    ledger.event(f"bulk ingest done: {ledger.acked_bytes / 1e6:.1f} MB acknowledged")


def file_job(path: Path) -> Job:
    text = path.read_bytes().decode("utf-8")
    return (str(path), {"file_path": str(path)}, sha(text), len(text.encode()))


def text_job(doc_id: str, text: str) -> Job:
    return (doc_id, {"text": text, "doc_id": doc_id, "title": doc_id}, sha(text), len(text.encode()))


async def editor(server: Server, files: list[Path], ledger: Ledger, stop: trio.Event) -> None:
    """Append a line to one of ``files``, ingest it by path again; repeat."""
    rng = random.Random(1)
    revision = 0
    while not stop.is_set():
        path = rng.choice(files)
        revision += 1
        with path.open("a", encoding="utf-8") as out:
            out.write(f"\n# revision {revision} at {ledger.now():.1f}\n")
        await ingester("editor", server, [file_job(path)], ledger, stop)
        await trio.sleep(0.5)


Step = Callable[[Client], Awaitable[None]]


async def repeating(who: str, server: Server, ledger: Ledger, stop: trio.Event, step: Step, pause: Callable[[], float]) -> None:  # fmt: skip
    """``step`` with one client until ``stop``, ``pause()`` seconds apart; a failure is noted, and
    once the server answers ``/health`` a new client goes on (as a team's script would)."""
    while not stop.is_set():
        try:
            async with Client(server.url) as client:
                await client.call_tool("context_open", {"session_id": who})
                while not stop.is_set():
                    await step(client)
                    await trio.sleep(pause())
        except Exception as exc:  # noqa: BLE001
            ledger.error(who, said(exc))
            await healthy(server.port)


def searching(who: str, ledger: Ledger, rng: random.Random) -> Step:
    """doc_search with a user's question: its latency, and why meaning took no part."""

    async def step(client: Client) -> None:
        started = time.perf_counter()
        result = await client.call_tool("doc_search", {"query": rng.choice(QUERIES), "budget_tokens": 1500})
        ms = (time.perf_counter() - started) * 1000
        if result.is_error:
            ledger.error(who, text_of(result))
            return
        skipped = re.search(r"Keyword search only: semantic recall skipped: ([^(]*?)(?: within|\(|\.)", text_of(result))
        ledger.searches.append((ledger.now(), ms, skipped.group(1).strip() if skipped else None))

    return step


def reading(ledger: Ledger, rng: random.Random) -> Step:
    """doc_window of a random acknowledged document, from the reader's cursor."""

    async def step(client: Client) -> None:
        if not ledger.acked:
            return
        doc_id = rng.choice(sorted(ledger.acked))
        started = time.perf_counter()
        result = await client.call_tool("doc_window", {"doc_id": doc_id, "session_id": "reader", "budget_tokens": 1500})
        if result.is_error:
            ledger.error("reader", f"{doc_id}: {text_of(result)}")
        else:
            ledger.windows.append((time.perf_counter() - started) * 1000)

    return step


def watching(server: Server, ledger: Ledger) -> Step:
    """context_status: chunks embedded of all, and the state; and the server's RSS."""
    line = re.compile(r"([\d,]+) of ([\d,]+) chunks? embedded[^;]*; ([^;\n]+)")

    async def step(client: Client) -> None:
        found = line.search(text_of(await client.call_tool("context_status", {"session_id": "watcher"})))
        if found:
            done, total = (int(group.replace(",", "")) for group in found.groups()[:2])
            ledger.embedded.append((ledger.now(), done, total, found.group(3)))
        ledger.rss.append(server.rss_bytes())

    return step


async def leaver(server: Server, ledger: Ledger, text: str, after_s: float) -> None:
    """A client that starts a large ingest and goes away ``after_s`` into it."""
    doc_id = f"left-after-{after_s:g}s"
    ledger.attempted.setdefault(doc_id, []).append((ledger.now(), sha(text)))
    try:
        async with Client(server.url) as client:
            with trio.move_on_after(after_s):
                await client.call_tool("doc_ingest", {"text": text, "doc_id": doc_id})
                ledger.acked.setdefault(doc_id, []).append((ledger.now(), sha(text), -1))
    except Exception as exc:  # noqa: BLE001
        ledger.error("leaver", said(exc))
    ledger.event(f"a client left {after_s:g} s into an ingest of {len(text) / 1e6:.1f} MB")


async def faults(
    embedder: EmbedServer, servers: tuple[Server, Server], ledger: Ledger, work: trio.Nursery, stops: tuple[trio.Event, trio.Event], seconds: float
) -> None:  # fmt: skip
    """The timeline of the module docstring (``stops``: the ingests' and everything's)."""
    server, peer = servers
    await trio.sleep_until(ledger_time(ledger, 0.2 * seconds))
    ledger.event("embedder SIGKILLed")
    await trio.to_thread.run_sync(embedder.kill)
    await trio.sleep(15)
    await trio.to_thread.run_sync(embedder.start)
    ledger.event("embedder started again")
    for share, sig in ((0.35, signal.SIGTERM), (0.5, signal.SIGKILL)):
        await trio.sleep_until(ledger_time(ledger, share * seconds))
        ledger.event(f"server {signal.Signals(sig).name}: {await server.stop(sig)}")
        ledger.event(f"server up again in {await server.start():.1f} s")
    await trio.sleep_until(ledger_time(ledger, 0.6 * seconds))
    ledger.event(f"second server on the data dir up in {await peer.start():.1f} s")
    texts = [text_job(f"peer-{path.stem}", path.read_text(encoding="utf-8")) for path in sorted(GIT_DOCS.glob("*.txt"))]
    work.start_soon(ingester, "peer-ingest", peer, texts[-40:], ledger, stops[0])
    peer_search = searching("peer-search", ledger, random.Random(77))
    work.start_soon(repeating, "peer-search", peer, ledger, stops[1], peer_search, lambda: 0.6)
    await trio.sleep_until(ledger_time(ledger, 0.7 * seconds))
    big = "\n\n".join(path.read_text(encoding="utf-8") for path in sorted(NODE.glob("*.md"))[:20])
    await leaver(server, ledger, big, 0.5)
    await leaver(server, ledger, big + "\nagain", 3.0)


def ledger_time(ledger: Ledger, at_s: float) -> float:
    """trio's clock at ``at_s`` seconds into the run."""
    return trio.current_time() + at_s - ledger.now()


async def lost(data: Path, ledger: Ledger) -> list[str]:
    """Acknowledged documents that do not hold the text of their last acknowledgement, nor of an
    ingest attempted after it (read with the library once every server stopped)."""
    async with open_context(Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
        stored = {info.doc_id: info for info in await ctx.documents.list_documents()}
    problems: list[str] = []
    for doc_id, acks in ledger.acked.items():
        at, digest, chunks = acks[-1]
        later = {attempt for when, attempt in ledger.attempted.get(doc_id, []) if when >= at - 0.001}
        info = stored.get(doc_id)
        if info is None:
            problems.append(f"{doc_id}: acknowledged at {at:.1f} s, missing")
        elif info.content_hash != digest and info.content_hash not in later:
            problems.append(f"{doc_id}: holds neither the text acknowledged at {at:.1f} s nor one sent after")
        elif chunks >= 0 and info.content_hash == digest and info.chunks != chunks:
            problems.append(f"{doc_id}: {info.chunks} chunks, {chunks} acknowledged")
    return problems


def _p(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[int(share * (len(ordered) - 1))]


def report(ledger: Ledger, problems: list[str]) -> None:
    """What the team would look at."""
    print(f"acknowledged {ledger.acked_bytes / 1e6:.1f} MB in {sum(map(len, ledger.acked.values()))} ingests of {len(ledger.acked)} documents")  # fmt: skip
    if ledger.bulk is not None:
        print(f"  the bulk ingest: {ledger.bulk[1] / 1e6:.1f} MB in {ledger.bulk[0]:.0f} s, {ledger.bulk[1] / 1e6 / ledger.bulk[0]:.2f} MB/s")  # fmt: skip
    searched = [ms for _at, ms, _why in ledger.searches]
    if searched:
        print(f"doc_search: {len(searched)}, p50 {statistics.median(searched):.0f} ms, p95 {_p(searched, 0.95):.0f} ms")
    reasons: dict[str, int] = {}
    for _at, _ms, why in ledger.searches:
        if why is not None:
            reasons[why] = reasons.get(why, 0) + 1
    print(f"  without meaning: {sum(reasons.values())} ({'; '.join(f'{n} {why}' for why, n in reasons.items())})")
    if ledger.windows:
        print(f"doc_window: {len(ledger.windows)}, p50 {statistics.median(ledger.windows):.0f} ms, p95 {_p(ledger.windows, 0.95):.0f} ms")  # fmt: skip
    if ledger.embedded:
        at, done, total, state = ledger.embedded[-1]
        first = next((row for row in ledger.embedded if row[1]), ledger.embedded[0])
        rate = (done - first[1]) / max(1.0, at - first[0])
        print(f"embedded {done:,} of {total:,} chunks at {at:.0f} s ({state}), {rate:.2f} chunks/s: "
              f"the rest in about {(total - done) / max(rate, 1e-9) / 3600:.1f} h")  # fmt: skip
    print(f"server RSS peak {max(ledger.rss, default=0) / 1e6:.0f} MB; {len(ledger.errors)} errors seen by clients")
    for problem in problems:
        print("LOST", problem)
    print(f"{len(ledger.acked) - len(problems)} of {len(ledger.acked)} acknowledged documents intact")


async def run(args: argparse.Namespace, work_dir: Path) -> int:
    data = work_dir / "data"
    edits = work_dir / "edits"
    edits.mkdir()
    for source in sorted(Path(os.__file__).parent.glob("*.py"))[:20]:
        (edits / source.name).write_bytes(source.read_bytes())
    ledger = Ledger()
    embedder = EmbedServer(args.venv, ensure_gguf(args.venv, args.venv.parent / "embed"), n_threads=1)
    await trio.to_thread.run_sync(embedder.start)
    roots = [PY_DOCS, GIT_DOCS, edits]
    flags = ["--embed-model", MODEL_ALIAS, "--embed-base-url", embedder.base_url]
    for root in roots:
        flags += ["--ingest-root", str(root)]
    servers = (
        Server(data, args.port or free_port(), work_dir / "server.log", *flags),
        Server(data, free_port(), work_dir / "peer.log", *flags),
    )
    server = servers[0]
    ledger.event(f"server up in {await server.start():.1f} s; logs in {work_dir}")
    files = sorted(PY_DOCS.rglob("*.txt")) + sorted(GIT_DOCS.glob("*.txt"))
    texts = [text_job(f"node-{path.stem}", path.read_text(encoding="utf-8")) for path in sorted(NODE.glob("*.md"))]
    stops = (trio.Event(), trio.Event())
    ledger.t0 = time.time()  # the clients start now: the timeline and the throughput count from here
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(repeating, "watcher", server, ledger, stops[1], watching(server, ledger), lambda: 1.0)
            async with trio.open_nursery() as work:
                bulk = [
                    (f"file{n}", [file_job(p) for p in files[n :: args.file_clients]]) for n in range(args.file_clients)
                ]
                bulk += [(f"text{n}", texts[n::2]) for n in range(2)]
                work.start_soon(bulk_ingest, server, bulk, ledger, stops[0])
                work.start_soon(editor, server, sorted(edits.glob("*.py")), ledger, stops[0])
                rng = random.Random(10)
                for n in range(args.searchers):
                    step = searching(f"search{n}", ledger, rng)
                    work.start_soon(
                        repeating, f"search{n}", server, ledger, stops[1], step, lambda: rng.uniform(0.2, 1.0)
                    )
                reading_step = reading(ledger, rng)
                work.start_soon(
                    repeating, "reader", server, ledger, stops[1], reading_step, lambda: rng.uniform(0.2, 1.0)
                )
                work.start_soon(faults, embedder, servers, ledger, work, stops, args.seconds)
                await trio.sleep(args.seconds)
                stops[0].set()
                ledger.event("ingest stops; searches go on")
                await trio.sleep(args.tail)
                stops[1].set()
            nursery.cancel_scope.cancel()
    finally:
        for each in servers:
            if each.process is not None and each.process.returncode is None:
                ledger.event(f"stopping {each.log.stem}: {await each.stop(signal.SIGTERM)}")
        await trio.to_thread.run_sync(embedder.stop)
    problems = await lost(data, ledger)
    report(ledger, problems)
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="the real-model venv (stress/real_server.py)")
    parser.add_argument("--seconds", type=float, default=300.0, help="how long the clients ingest")
    parser.add_argument("--tail", type=float, default=90.0, help="searching goes on this long after")
    parser.add_argument("--file-clients", type=int, default=6)
    parser.add_argument("--searchers", type=int, default=3)
    parser.add_argument("--port", type=int, help="the server's port (default: a free one)")
    args = parser.parse_args()
    for needed in (PY_DOCS, GIT_DOCS, NODE):
        if not needed.is_dir():
            raise SystemExit(f"{needed} not found (python3.11-doc, git-doc, nodejs-doc unzipped there)")
    with tempfile.TemporaryDirectory(prefix="team-http-") as tmp:
        return trio.run(run, args, Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
