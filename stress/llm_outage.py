"""LLM outage: summarizing tools stay fast and say why when the endpoint is dead, hung or slow.

Run as ``python stress/llm_outage.py`` from the repository root. Builds a markdown
document of at least ``--chunks`` chunks (200 by default, ``--chunk-tokens`` each),
then for each endpoint mode starts the real server as a stdio subprocess, driven by
the SDK client, with ``--llm-base-url`` pointing at a local endpoint:

* ``refused`` — a closed port on 127.0.0.1 (connections are refused);
* ``hanging`` — a TCP listener that reads requests and never answers;
* ``slow`` — the fake OpenAI-compatible server of ``tests/llm/fake_openai.py`` with
  ``--slow-delay`` seconds per answer (slow but fine).

In each mode it times the first ``tools/list``, the ingest, ``doc_summarize`` of the
whole document with ``refresh=true`` and ``doc_outline`` with ``summarize=true``, and
prints each wall time with the method and note the result reports. In ``slow`` mode
both tools are called again without ``refresh`` to show that they resume from the
cache. Wall times are client side: request to parsed result.

Must-show (exit 1 when one fails), besides every note saying each reason once: refused → each call returns in <= 2 s, extractive,
saying the LLM is unavailable; hanging → each call returns within ``--deadline`` + 2 s,
extractive, with a note saying why; slow → the first summary used the LLM, and the
second outline call had more LLM one-liners than the first (or all of them).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent

from ctxtrio.text.chunking import chunk_document  # noqa: E402
from ctxtrio.text.tokens import TokenModel  # noqa: E402
from testkit.fake_openai import FakeServer, closed_port_url, open_fake_openai  # noqa: E402
from testkit.results import text_of  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

Mode = Literal["refused", "hanging", "slow"]
MODES: tuple[Mode, ...] = ("refused", "hanging", "slow")
FAST_S = 2.0  # refused: every call within this
SLACK_S = 2.0  # hanging: every call within the deadline plus this
OVERLAP_TOKENS = 80
#: What the fake answers to every chat: recognisable in the outline's lines.
FAKE_MARK = "Fake summary"

WORDS = (
    "buffer cache chunk cursor deadline endpoint journal ledger model offset outline page query "
    "recall session slice summary token window breaker client server stream worker budget index "
    "compaction latency request answer timeout retry cooldown probe extractive sentence heading "
    "section table figure parser record header footer version release build deploy rollback"
).split()


@dataclass(frozen=True, slots=True)
class Call:
    """One timed tool call and what its result reports."""

    label: str
    wall_s: float
    method: str
    note: str
    llm_lines: int = 0  # outline only: one-liners the LLM wrote

    def line(self) -> str:
        lines = f" llm_lines={self.llm_lines}" if self.label.startswith("outline") else ""
        return f"  {self.label:<22} {self.wall_s:7.2f} s  method={self.method}{lines}  note={self.note or '-'}"


def build_document(sections: int, seed: int = 7) -> str:
    """A markdown document of ``sections`` sections of about 600 tokens, each a few paragraphs."""
    rng = random.Random(seed)
    parts = ["# Outage manual\n\nA long manual for the LLM outage stress run.\n\n"]
    for number in range(1, sections + 1):
        parts.append(f"## Section {number}: {' '.join(rng.choices(WORDS, k=3))}\n\n")
        for _ in range(5):
            sentences = (
                " ".join(rng.choices(WORDS, k=rng.randint(8, 16))).capitalize() + f" {rng.randint(1, 999)}."
                for _ in range(5)
            )
            parts.append(" ".join(sentences) + "\n\n")
    return "".join(parts)


def document_with_chunks(wanted: int, chunk_tokens: int) -> tuple[str, int]:
    """A document that the server's cold token model cuts into at least ``wanted`` chunks."""
    sections = wanted
    while True:
        text = build_document(sections)
        count = len(
            chunk_document(text, chunk_tokens=chunk_tokens, overlap_tokens=OVERLAP_TOKENS, model=TokenModel.cold())
        )
        if count >= wanted:
            return text, count
        sections += max(1, (wanted - count) * sections // max(count, 1))


def note_of(text: str) -> str:
    """The ``Note: ...`` a result carries (summary head or outline tail), else ""."""
    for line in text.splitlines():
        at = line.find("Note: ")
        if at >= 0:
            return line[at + len("Note: ") :].rstrip(".")
    return ""


async def summarize(client: Client, label: str, *, refresh: bool) -> Call:
    started = trio.current_time()
    result = await client.call_tool("doc_summarize", {"doc_id": "manual", "refresh": refresh})
    wall_s = trio.current_time() - started
    if result.is_error:
        raise RuntimeError(f"doc_summarize failed: {text_of(result)}")
    data = result.structured_content or {}
    method = f"{data.get('method')}{' (cached)' if data.get('cached') else ''}"
    return Call(label, wall_s, method, note_of(text_of(result)))


async def outline(client: Client, label: str, chunks: int) -> Call:
    started = trio.current_time()
    arguments = {"doc_id": "manual", "summarize": True, "max_chunks": min(chunks, 500)}
    result = await client.call_tool("doc_outline", arguments)
    wall_s = trio.current_time() - started
    if result.is_error:
        raise RuntimeError(f"doc_outline failed: {text_of(result)}")
    text = text_of(result)
    llm_lines = sum(1 for line in text.splitlines() if line.startswith("#") and FAKE_MARK in line)
    note = note_of(text)
    method = "extractive" if "extractive" in note else "llm"
    if note and llm_lines:
        method = "llm+extractive"
    return Call(label, wall_s, method, note, llm_lines)


@asynccontextmanager
async def endpoint(mode: Mode, delay_s: float) -> AsyncIterator[str]:
    """The base URL of a local endpoint behaving as ``mode``; it stops when the block ends."""
    if mode == "refused":
        yield closed_port_url()
        return
    async with trio.open_nursery() as nursery:
        if mode == "hanging":
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
            port = listeners[0].socket.getsockname()[1]
            await nursery.start(trio.serve_listeners, swallow, listeners)
            yield f"http://127.0.0.1:{port}/v1"
        else:
            fake = FakeServer(
                delay_s=delay_s, reply=lambda messages: f"{FAKE_MARK} of {len(messages[-1]['content'])} characters."
            )
            await open_fake_openai(nursery, fake)
            yield fake.base_url
        nursery.cancel_scope.cancel()


async def swallow(stream: trio.SocketStream) -> None:
    """Read a connection until the peer closes it; never answer."""
    async with stream:
        async for _ in stream:
            pass


async def run_mode(mode: Mode, args: argparse.Namespace, text: str, chunks: int, workdir: Path) -> list[Call]:
    """Start a fresh server against a ``mode`` endpoint; ingest, summarize and outline through it."""
    calls: list[Call] = []
    log_path = workdir / f"server-{mode}.log"
    async with endpoint(mode, args.slow_delay) as base_url:
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "ctxtrio",
                "--data-dir",
                str(workdir / f"data-{mode}"),
                "--no-audit",
                "--llm-base-url",
                base_url,
                "--llm-deadline",
                f"{args.deadline:g}",
                "--chunk-tokens",
                str(args.chunk_tokens),
                "--chunk-overlap",
                str(OVERLAP_TOKENS),
            ],
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT)},
        )
        with open(log_path, "w") as errlog:
            started = trio.current_time()
            async with Client(stdio_client(params, errlog=errlog)) as client:
                tools = await client.list_tools()
                calls.append(Call("start+tools/list", trio.current_time() - started, f"{len(tools.tools)} tools", ""))
                started = trio.current_time()
                ingested = await client.call_tool("doc_ingest", {"text": text, "doc_id": "manual"})
                data = ingested.structured_content or {}
                if ingested.is_error or data.get("chunks") != chunks:
                    raise RuntimeError(f"ingest: expected {chunks} chunks, got {text_of(ingested)}")
                calls.append(Call("doc_ingest", trio.current_time() - started, f"{chunks} chunks", ""))
                calls.append(await summarize(client, "summarize refresh", refresh=True))
                calls.append(await outline(client, "outline summarize", chunks))
                if mode == "hanging":  # the breaker's first cooldown (2 s) is over: one call probes
                    await trio.sleep(args.cooldown_wait)
                    calls.append(await summarize(client, "summarize later", refresh=True))
                    calls.append(await outline(client, "outline later", chunks))
                if mode == "slow":
                    calls.append(await summarize(client, "summarize again", refresh=False))
                    calls.append(await outline(client, "outline again", chunks))
    return calls


def failures(mode: Mode, calls: list[Call], deadline_s: float, chunks: int) -> list[str]:
    """The must-shows that ``calls`` break, as sentences."""
    problems: list[str] = []
    tool_calls = [call for call in calls if call.label.startswith(("summarize", "outline"))]
    for call in tool_calls:
        reasons = [re.sub(r"[\d.]+", "#", part) for part in call.note.split("; extractive")]
        if len(set(reasons)) < len(reasons):
            problems.append(f"{mode}: {call.label} repeats a reason: {call.note!r}")
    if mode == "refused":
        for call in tool_calls:
            if call.wall_s > FAST_S:
                problems.append(f"refused: {call.label} took {call.wall_s:.2f} s > {FAST_S} s")
            if call.method != "extractive" or "unavailable" not in call.note:
                problems.append(f"refused: {call.label} is {call.method!r}, note {call.note!r}")
    elif mode == "hanging":
        for call in tool_calls:
            if call.wall_s > deadline_s + SLACK_S:
                problems.append(f"hanging: {call.label} took {call.wall_s:.2f} s > {deadline_s + SLACK_S} s")
            if call.method != "extractive" or "extractive" not in call.note:
                problems.append(f"hanging: {call.label} is {call.method!r}, note {call.note!r}")
    else:
        problems.extend(slow_failures(tool_calls, chunks))
    return problems


def slow_failures(tool_calls: list[Call], chunks: int) -> list[str]:
    """Against a slow model: the first summary comes from it, and the second outline resumes the first."""
    problems: list[str] = []
    first = next(call for call in tool_calls if call.label == "summarize refresh")
    if not first.method.startswith("llm"):
        problems.append(f"slow: first summary is {first.method!r}, note {first.note!r}")
    outlines = [call for call in tool_calls if call.label.startswith("outline")]
    if not (outlines[1].llm_lines > outlines[0].llm_lines or outlines[1].llm_lines == chunks):
        problems.append(f"slow: the second outline did not resume ({outlines[0].llm_lines} -> {outlines[1].llm_lines})")
    return problems


async def main(args: argparse.Namespace) -> int:
    text, chunks = await trio.to_thread.run_sync(document_with_chunks, args.chunks, args.chunk_tokens)
    print(
        f"document: {len(text):,} chars, {chunks} chunks of <= {args.chunk_tokens} tokens; "
        f"--llm-deadline {args.deadline:g} s, slow fake {args.slow_delay:g} s per answer"
    )
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="llm-outage-") as tmp:
        for mode in args.modes:
            print(f"mode {mode}:")
            calls = await run_mode(mode, args, text, chunks, Path(tmp))
            for call in calls:
                print(call.line())
            broken = failures(mode, calls, args.deadline, chunks)
            for problem in broken:
                print(f"  MUST-SHOW FAILED: {problem}")
            if broken:
                print(
                    f"  server log tail ({mode}):\n"
                    + "".join((Path(tmp) / f"server-{mode}.log").read_text().splitlines(True)[-10:])
                )
            problems += broken
    print("must-show: " + ("FAILED" if problems else "ok"))
    return 1 if problems else 0


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--deadline", type=float, default=10.0, help="--llm-deadline of the server, seconds [10]")
    p.add_argument("--chunks", type=int, default=200, help="chunks of the document, at least [200]")
    p.add_argument("--chunk-tokens", type=int, default=800, help="--chunk-tokens of the server [800]")
    p.add_argument(
        "--cooldown-wait",
        type=float,
        default=3.0,
        help="hanging: seconds to wait before calling again, past the breaker's cooldown [3]",
    )
    p.add_argument("--slow-delay", type=float, default=0.1, help="seconds the slow fake takes per answer [0.1]")
    p.add_argument(
        "--modes",
        type=lambda s: [m for m in s.split(",") if m],
        default=list(MODES),
        help="comma-separated subset of refused,hanging,slow [all]",
    )
    args = p.parse_args()
    for mode in args.modes:
        if mode not in MODES:
            p.error(f"unknown mode {mode!r}")
    return args


if __name__ == "__main__":
    sys.exit(trio.run(main, parse_args()))
