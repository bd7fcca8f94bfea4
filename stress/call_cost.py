"""What one doc_ingest over stdio costs the server, layer by layer: CPU a call (event loop and all), loop turns.

    python stress/call_cost.py                          # 1,000 calls of 100 bytes, three layers
    python stress/call_cost.py --corpus stdlib --layers full tools
    python stress/call_cost.py --tree /tmp/before       # another checkout's server, same client

Layers (each a server started over stdio by the SDK's own client, a fresh data dir):

* ``full``: ``python -m ctxtrio --no-llm --no-audit``;
* ``tools``: the same server with ``DocumentService.ingest`` answering at once, so what is
  left is everything above the document service (transport, SDK, tool dispatch, the
  answer's rendering and encoding);
* ``sdk``: the SDK's low-level server over ctxtrio's stdio transport with one tool that
  answers at once (the floor a call pays before any ctxtrio tool code runs).

After 20 warm-up calls, ``--calls`` calls one at a time (or each file of ``--corpus``
once). Printed per call: the server's CPU from ``/proc`` (its event-loop thread, and the
whole process tree), the trio loop turns and task steps counted by an instrument in the
server during the measured calls, and wall time. Layers alternate over ``--rounds`` so
load on a shared machine hits them alike; name the load beside any figure. Linux only.
``--client legacy`` speaks the initialize handshake (what most hosts do); the default lets
the client choose (the SDK's client opens 2026-07-28 connections).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

_MEASURED = "measure-"
_WARM_UP = 20


# -- the server side (``--serve LAYER``) ------------------------------------------------------


class _Counts(trio.abc.Instrument):
    """A trio instrument: loop turns and task steps, from the first measured call on."""

    def __init__(self) -> None:
        self.turns = 0
        self.steps = 0
        self.calls = 0
        self.start: tuple[int, int] | None = None

    def before_io_wait(self, timeout: float) -> None:
        self.turns += 1

    def before_task_step(self, task: object) -> None:
        self.steps += 1

    def seen(self, arguments: object) -> None:
        doc_id = arguments.get("doc_id") if isinstance(arguments, dict) else None
        if isinstance(doc_id, str) and doc_id.startswith(_MEASURED):
            if self.start is None:
                self.start = (self.turns, self.steps)
            self.calls += 1

    def dump(self, path: str) -> None:
        turns, steps = self.start or (self.turns, self.steps)
        facts = {"turns": self.turns - turns, "steps": self.steps - steps, "calls": self.calls}
        Path(path).write_text(json.dumps(facts))


def serve(layer: str, stats: str, argv: list[str]) -> int:
    import atexit
    from functools import partial

    import ctxtrio._sdk as sdk

    counts = _Counts()
    atexit.register(counts.dump, stats)
    original_run = trio.run
    trio.run = partial(original_run, instruments=[counts])  # type: ignore[assignment]
    original_make = sdk.make_server

    def make_server(**kwargs: object) -> object:
        call = kwargs.pop("call")

        async def counted(name: str, arguments: object, progress: object) -> object:
            counts.seen(arguments)
            return await call(name, arguments, progress)  # type: ignore[operator]

        return original_make(call=counted, **kwargs)  # type: ignore[arg-type]

    sdk.make_server = make_server  # type: ignore[assignment]
    if layer == "sdk":
        return _serve_floor(sdk.make_server)
    if layer == "tools":
        _answer_ingest_at_once()
    from ctxtrio._cli import main

    return main(argv)


def _answer_ingest_at_once() -> None:
    from ctxtrio.docs.model import DocumentInfo, IngestResult
    from ctxtrio.docs.service import DocumentService

    async def ingest(self: object, *, text: str | None = None, doc_id: str | None = None, **_: object) -> IngestResult:
        info = DocumentInfo(doc_id or "doc", "title", "inline", 1, len(text or ""), 20, time.time(), "0" * 64)
        return IngestResult(info, replaced=False, elapsed_s=0.0)

    DocumentService.ingest = ingest  # type: ignore[method-assign]


def _serve_floor(make_server: object) -> int:
    from ctxtrio.transport.stdio import CancellableLines, claim_stdout, serve_stdio

    class Answer:
        text = "ok"
        structured = {"ok": True}
        is_error = False

    async def call(name: str, arguments: object, progress: object) -> Answer:
        return Answer()

    schema = {"type": "object", "properties": {"text": {"type": "string"}, "doc_id": {"type": "string"}}}
    tools = [{"name": "doc_ingest", "description": "answers at once", "inputSchema": schema}]

    async def run() -> None:
        server = make_server(name="floor", version="0", instructions="", tools=tools, call=call)  # type: ignore[operator]
        with claim_stdout() as out:
            await serve_stdio(server, CancellableLines(0), out)

    trio.run(run)
    return 0


# -- the client side --------------------------------------------------------------------------


async def measure(layer: str, tree: Path, texts: list[str], client_mode: str) -> dict[str, float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from proc_cpu import TreeMeter, children, cpu_seconds

    with tempfile.TemporaryDirectory(prefix="call-cost-") as tmp:
        stats = Path(tmp) / "stats.json"
        args = [__file__, "--serve", layer, "--stats", str(stats), "--", "--data-dir", f"{tmp}/data"]
        env = {**os.environ, "PYTHONPATH": str(tree)}
        command = StdioServerParameters(
            command=sys.executable, args=[*args, "--no-llm", "--no-audit"], cwd=tree, env=env
        )
        async with Client(command, mode=client_mode) as client:
            await client.list_tools()
            (server,) = children(os.getpid())
            for number in range(_WARM_UP):
                await client.call_tool("doc_ingest", {"text": f"warm {number} " * 10, "doc_id": f"warm-{number}"})
            loop_stat = f"/proc/{server}/task/{server}/stat"
            meter, loop_before = TreeMeter(server), cpu_seconds(loop_stat)
            started = time.perf_counter()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(meter.run)
                for number, text in enumerate(texts):
                    result = await client.call_tool("doc_ingest", {"text": text, "doc_id": f"{_MEASURED}{number}"})
                    assert not result.is_error, result.content
                nursery.cancel_scope.cancel()
            meter.sample()
            wall, loop = time.perf_counter() - started, cpu_seconds(loop_stat) - loop_before
            total = meter.spent()
        facts = json.loads(stats.read_text())
    count = len(texts)
    return {
        "loop_ms": loop / count * 1e3,
        "cpu_ms": total / count * 1e3,
        "wall_ms": wall / count * 1e3,
        "turns": facts["turns"] / max(facts["calls"], 1),
        "steps": facts["steps"] / max(facts["calls"], 1),
        "cpu_per_mb": total / (sum(len(text.encode("utf-8", "surrogatepass")) for text in texts) / 1e6),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", choices=["full", "tools", "sdk"], help=argparse.SUPPRESS)
    parser.add_argument("--stats", help=argparse.SUPPRESS)
    parser.add_argument("--layers", nargs="+", choices=["full", "tools", "sdk"], default=["full", "tools", "sdk"])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--size", type=int, default=100, help="bytes of text a call (without --corpus)")
    parser.add_argument("--corpus", help="one call per file of this corpus (stress/real_text.py), e.g. stdlib")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--client", choices=["auto", "legacy"], default="auto")
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1], help="checkout to serve")
    args, rest = parser.parse_known_args()
    if args.serve:
        return serve(args.serve, args.stats, [item for item in rest if item != "--"])
    if args.corpus:
        from real_text import load

        texts = [doc.text for doc in load(args.corpus)]
    else:
        texts = [(f"word{number} " * (args.size // 8 + 1))[: args.size] for number in range(args.calls)]
    what = f"{args.corpus} ({len(texts)} files)" if args.corpus else f"{len(texts)} calls of {args.size} bytes"
    print(f"doc_ingest over stdio, {what}, client {args.client}, tree {args.tree}")
    print(f"{'layer':6} {'loop ms':>8} {'CPU ms':>8} {'CPU-s/MB':>9} {'turns':>6} {'steps':>6} {'wall ms':>8}  load")
    from proc_cpu import byte_compiled

    byte_compiled(args.tree.resolve())  # as an install is: no module compiled at each start
    for _ in range(args.rounds):
        for layer in args.layers:
            row = trio.run(measure, layer, args.tree.resolve(), texts, args.client)
            print(
                f"{layer:6} {row['loop_ms']:8.2f} {row['cpu_ms']:8.2f} {row['cpu_per_mb']:9.3f} {row['turns']:6.1f}"
                f" {row['steps']:6.1f} {row['wall_ms']:8.2f}  {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
