"""Issue 27 finding 10's last corners: concurrent CLI runs, a call cancelled at shutdown, cursor growth.

1. three ``ctxtrio ingest DIR`` runs of one 20-file folder at once store 20 documents
   (before: 31, each run finding nothing and storing its own copy);
2. calls in flight when the shutdown grace ends (a 2 MB ``doc_ingest``, a ``doc_summarize``
   waiting on a model that never answers) are audited ``"outcome":"cancelled"``, not "ok";
3. 300 ``doc_window`` calls (the catalog appends a cursor record on each) with the
   compaction slack set to 50: the catalog keeps at most live cursors + slack + 1 of them,
   and a second process reads on from where the first left off.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from typing import TYPE_CHECKING

import trio

from attacks import ROOT, Row, guarded
from testkit.fake_openai import FakeServer, open_fake_openai

if TYPE_CHECKING:
    from pathlib import Path

ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "attack", "version": "1"}},
}


def _ctxtrio(data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "ctxtrio", *args, "--data-dir", str(data)]


async def _concurrent_ingests(work: Path) -> Row:
    folder, data = work / "folder", work / "ingest-data"
    folder.mkdir(parents=True)
    for number in range(20):
        (folder / f"d{number}.md").write_text(f"# note {number}\n\nsome text about item {number}\n")
    command = _ctxtrio(data, "ingest", str(folder), "--no-llm")
    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(partial(trio.run_process, command, capture_stdout=True, env=ENV, cwd=ROOT))
    listed = await trio.run_process(_ctxtrio(data, "docs", "--no-llm"), capture_stdout=True, env=ENV, cwd=ROOT)
    count = len(listed.stdout.decode().splitlines())
    return Row(
        "10a three `ctxtrio ingest DIR` of one 20-file folder at once",
        "20 documents, no duplicates",
        f"{count} documents",
        count == 20,
    )


def _call(number: int, name: str, arguments: dict[str, object]) -> str:
    message = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return json.dumps(message)


async def _cancelled_at_shutdown(work: Path) -> Row:
    big = "\n\n".join(f"Paragraph {i}: the quick brown fox jumps over the lazy dog. " * 4 for i in range(6000))
    async with trio.open_nursery() as nursery:
        model = await open_fake_openai(nursery, FakeServer(mode="hang"))
        data = work / "cancel-data"
        # The summary needs a document first: a run that stores one and exits.
        setup = [json.dumps(_INIT), '{"jsonrpc":"2.0","method":"notifications/initialized"}']
        setup.append(_call(2, "doc_ingest", {"text": "# Notes\n\n" + "A sentence about rivers. " * 400, "doc_id": "n"}))
        await trio.run_process(
            [*_ctxtrio(data, "--no-llm", "--no-audit")], stdin=("\n".join(setup) + "\n").encode(), env=ENV, cwd=ROOT,
            capture_stdout=True, capture_stderr=True,
        )  # fmt: skip
        lines = [json.dumps(_INIT), '{"jsonrpc":"2.0","method":"notifications/initialized"}']
        lines.append(_call(5, "doc_summarize", {"doc_id": "n"}))
        lines.append(_call(6, "doc_ingest", {"text": big, "title": "big"}))
        flags = ["--audit", "--shutdown-grace", "0", "--llm-base-url", model.base_url]
        ran = await trio.run_process(
            _ctxtrio(data, *flags), stdin=("\n".join(lines) + "\n").encode(), env=ENV, cwd=ROOT,
            capture_stdout=True, capture_stderr=True, check=False,
        )  # fmt: skip
        nursery.cancel_scope.cancel()
    audited = {}
    for line in ran.stderr.decode(errors="replace").splitlines():
        if line.startswith("{") and '"tool_call"' in line:
            item = json.loads(line)
            audited[item["tool"]] = item["outcome"]
    held = ran.returncode == 0 and audited == {"doc_summarize": "cancelled", "doc_ingest": "cancelled"}
    return Row(
        "10b doc_summarize (model hangs) and a 2 MB doc_ingest in flight at EOF, --shutdown-grace 0",
        'both audited "outcome":"cancelled"',
        f"exit {ran.returncode}; audited {audited}",
        held,
    )


_WINDOWS = """
import sys, trio
from pathlib import Path
from ctxtrio import Config, open_context
from ctxtrio.docs import catalog
catalog.CURSOR_SLACK = 50
async def main():
    async with open_context(Config(data_dir=Path(sys.argv[1]), llm_enabled=False, audit=False, chunk_tokens=50,
                                   chunk_overlap_tokens=0)) as ctx:
        if sys.argv[2] == "write":
            text = "\\n\\n".join(f"# Part {n}\\n\\nParagraph {n} is about topic {n}." for n in range(40))
            doc = (await ctx.documents.ingest(text=text, doc_id="d")).doc
            for number in range(5):
                await ctx.sessions.open(f"s{number}")  # a cursor belongs to a session
            for step in range(300):
                at = step % doc.chunks
                await ctx.documents.window("d", start=at, end=at, session_id=f"s{step % 5}")
            print(doc.chunks)
        else:
            print((await ctx.documents.window("d", session_id="s0", end=int(sys.argv[3]))).chunks[0].index)
trio.run(main)
"""


async def _cursor_growth(work: Path) -> Row:
    data = work / "cursor-data"
    wrote = await trio.run_process(
        [sys.executable, "-c", _WINDOWS, str(data), "write"], capture_stdout=True, env=ENV, cwd=ROOT
    )
    chunks = int(wrote.stdout)
    catalog = data / "docs" / "catalog.jsonl"
    kinds = [json.loads(line)["kind"] for line in catalog.read_text().splitlines()]
    cursors = kinds.count("cursor")
    expected = (295 % chunks) + 1  # session s0's last window began at chunk 295 % chunks
    read = await trio.run_process(
        [sys.executable, "-c", _WINDOWS, str(data), "read", str(expected)], capture_stdout=True, env=ENV, cwd=ROOT
    )
    next_index = int(read.stdout)
    held = cursors <= 5 + 50 + 1 and next_index == expected
    return Row(
        "10c 300 doc_window calls in 5 sessions (a cursor record each), slack 50",
        "<= 56 cursor records kept; another process reads on at the cursor",
        f"{cursors} cursor records of {len(kinds)} lines ({catalog.stat().st_size:,} bytes); next read began at "
        f"{next_index} (expected {expected})",
        held,
    )


def run(work: Path) -> list[Row]:
    async def main() -> list[Row]:
        rows: list[Row] = []
        for name, attack, limit in (
            ("10a concurrent CLI ingests", _concurrent_ingests, 240),
            ("10b cancelled at shutdown", _cancelled_at_shutdown, 240),
            ("10c cursor growth", _cursor_growth, 240),
        ):
            rows += await guarded(name, lambda attack=attack: attack(work), limit)  # type: ignore[misc]
        return rows

    return trio.run(main)
