"""How long ``resources/read`` takes on a large document, and how much it returns.

    python stress/resource_read.py [--mb 50] [--repeat 20]

Ingests a generated markdown log of ``--mb`` megabytes (headings every ~40 lines) into a
fresh data dir with the library, then reads ``ctxtrio://docs/{id}`` (outline) and
``ctxtrio://docs/{id}/chunks/0-999999`` (everything asked for) through a real MCP client
(in-process, the 2026-07-28 path) ``--repeat`` times each, and prints per-read wall and
process CPU milliseconds (p50 / max) and the tokens returned against the budget.
"Warm" reads follow the ingest in the same process; "cold" reads are the first of a
second ``open_context`` on the same data dir (the document is loaded from its journal).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from mcp import Client
from mcp.types import TextResourceContents

import ctxtrio
from ctxtrio._app import build_server
from ctxtrio._wiring import open_wiring

BUDGET = 4000


def make_text(megabytes: int) -> str:
    lines: list[str] = []
    size, section = 0, 0
    target = megabytes * 1_000_000
    while size < target:
        if len(lines) % 40 == 0:
            section += 1
            lines.append(f"\n## Section {section}\n")
        line = f"{section:06d}.{len(lines) % 40:02d} INFO worker-{section % 17} handled request id={len(lines)} in {len(lines) % 97} ms"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


async def timed_reads(client: Client, uri: str, repeat: int) -> tuple[list[float], list[float], str]:
    walls: list[float] = []
    cpus: list[float] = []
    text = ""
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = await client.read_resource(uri)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        content = result.contents[0]
        assert isinstance(content, TextResourceContents)
        text = content.text
    return walls, cpus, text


def line(label: str, walls: list[float], cpus: list[float], tokens: int) -> str:
    return (
        f"{label:34s} wall p50 {statistics.median(walls):7.1f} ms max {max(walls):7.1f} | "
        f"cpu p50 {statistics.median(cpus):7.1f} ms max {max(cpus):7.1f} | {tokens} tokens (budget {BUDGET})"
    )


async def main(megabytes: int, repeat: int) -> None:
    text = make_text(megabytes)
    with tempfile.TemporaryDirectory() as tmp:
        config = ctxtrio.Config(
            data_dir=Path(tmp), llm_enabled=False, audit=False, budget_tokens=BUDGET, max_ingest_chars=len(text) + 1
        )
        uris = ("ctxtrio://docs/big", "ctxtrio://docs/big/chunks/0-999999", "ctxtrio://docs/big/chunks/5000-5003")
        async with open_wiring(config) as ctx:
            started = time.perf_counter()
            result = await ctx.documents.ingest(text=text, doc_id="big", title="big log")
            print(
                f"ingested {len(text) / 1e6:.1f} MB: {result.doc.chunks} chunks in {time.perf_counter() - started:.1f} s"
            )
            del text
            model = ctx.live.tokens.current
            async with Client(build_server(ctx)) as client:
                for uri in uris:
                    walls, cpus, read = await timed_reads(client, uri, repeat)
                    print(
                        line(
                            f"warm {uri.removeprefix('ctxtrio://docs/big') or '(outline)'}",
                            walls,
                            cpus,
                            model.estimate(read),
                        )
                    )
        async with open_wiring(config) as ctx, Client(build_server(ctx)) as client:
            model = ctx.live.tokens.current
            for uri in uris:
                walls, cpus, read = await timed_reads(client, uri, 1)
                print(
                    line(
                        f"cold {uri.removeprefix('ctxtrio://docs/big') or '(outline)'}",
                        walls,
                        cpus,
                        model.estimate(read),
                    )
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=20)
    options = parser.parse_args()
    trio.run(main, options.mb, options.repeat)
