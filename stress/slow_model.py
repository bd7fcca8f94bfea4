"""Summaries against a slow model: how many calls until the LLM summary, each within its deadline.

Run as ``python stress/slow_model.py`` from the repository root. It starts the fake
streaming model of ``tests/llm/fake_stream.py`` on loopback (16 generated tokens/s, 60
prompt tokens/s: issue 10's Gemma 3 270M on CPU), opens the library with a data dir of
its own, and:

* ingests a document of ``--chunks`` chunks (200 by default) and calls
  ``doc_summarize`` on its first ``--summary-chunks`` (50: the issue's Must show) back
  to back, each with the ``--deadline`` (45 s), until the answer is ``llm`` or
  ``--max-calls`` is reached;
* appends a 60-entry session and compacts it once within the deadline.

Per call it prints the wall time (real clock), the share of the summary done by the
LLM (finished parts / parts, from the answer), the method, and whether the calls
converged (an ``llm`` answer). ``--speedup N`` runs the model and the deadline N times
faster (same dynamics, N times less waiting); times are printed as measured and as
their equivalent at speed 1. Prints ``uptime``'s load next to the numbers.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

from ctxtrio._config import Config
from ctxtrio._wiring import Wiring, open_wiring
from testkit.deadlines import until
from tests.llm.fake_stream import FakeModel, open_fake_model

_SHARE = re.compile(r"(\d+) of (\d+) parts")


def document(chunks: int) -> str:
    """Markdown with one section per expected chunk, each section with its own figures."""
    sections = []
    for n in range(chunks):
        body = " ".join(
            f"Service svc{n}-{k} listens on port {8000 + n * 10 + k} and retries {k + 2} times before it gives up."
            for k in range(20)
        )
        sections.append(f"## Part {n}\n\n{body}")
    return "\n\n".join(sections)


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


async def summaries(ctx: Wiring, args: argparse.Namespace) -> None:
    info = (await ctx.documents.ingest(text=document(args.chunks), doc_id="big")).doc
    end = min(args.summary_chunks, info.chunks) - 1
    deadline_s = args.deadline / args.speedup
    print(f"document: {info.chunks} chunks; summarizing chunks 0..{end} ({load()})")
    for call in range(1, args.max_calls + 1):
        started = trio.current_time()
        summary = await ctx.documents.summarize(
            "big", start=0, end=end, target_tokens=500, wait=until(started + deadline_s)
        )
        wall = trio.current_time() - started
        found = _SHARE.search(summary.note)
        share = "1.00" if summary.method == "llm" else (f"{int(found[1]) / int(found[2]):.2f}" if found else "0.00")
        print(
            f"call {call}: wall {wall:6.2f} s (= {wall * args.speedup:6.1f} s at speed 1), "
            f"LLM share {share}, method {summary.method}; {load()}"
        )
        if summary.method == "llm":
            print(f"converged: full LLM summary after {call} calls")
            return
    print(f"not converged within {args.max_calls} calls")


async def session(ctx: Wiring, args: argparse.Namespace) -> None:
    for n in range(60):
        text = (
            f"Decision: use port {9000 + n} for worker {n}."
            if n % 8 == 0
            else f"Ran the test suite, run {n}: {n % 3} failing."
        )
        await ctx.sessions.append("work", text)
    started = trio.current_time()
    result = await ctx.sessions.compact(
        "work", keep_recent=5, target_tokens=200, wait=until(started + args.deadline / args.speedup)
    )
    wall = trio.current_time() - started
    print(
        f"session compact (60 entries): wall {wall:.2f} s (= {wall * args.speedup:.1f} s at speed 1), "
        f"method {result.method}; note: {result.note or '-'}; {load()}"
    )


async def main(args: argparse.Namespace) -> None:
    async with trio.open_nursery() as nursery:
        model = await open_fake_model(
            nursery, FakeModel(gen_rate=16.0 * args.speedup, prompt_rate=60.0 * args.speedup, n_ctx=8192)
        )
        with tempfile.TemporaryDirectory() as tmp:
            config = Config(
                data_dir=Path(tmp) / "data",
                llm_base_url=model.base_url,
                llm_deadline_s=args.deadline / args.speedup,
                llm_timeout_s=120.0 / args.speedup,
                audit=False,
            )
            async with open_wiring(config) as ctx:
                with trio.fail_after(30):
                    while ctx.live.context_length is None:  # calibration found the window
                        await trio.sleep(0.05)
                await summaries(ctx, args)
                await session(ctx, args)
        print(f"model: {len(model.served)} requests, still generating at the end: {model.generating}")
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--summary-chunks", type=int, default=50)
    parser.add_argument("--deadline", type=float, default=45.0)
    parser.add_argument("--max-calls", type=int, default=20)
    parser.add_argument("--speedup", type=float, default=1.0)
    trio.run(main, parser.parse_args())
