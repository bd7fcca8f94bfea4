"""Summary faults: a model that echoes, dies mid-answer or hangs before its first token, and a kill mid-summary.

The model is the slow streaming fake of ``tests/llm/fake_stream.py`` on loopback (its
docstring cites the real servers' behaviour it models), run faster than issue 10's
Gemma so the rows take seconds. Rows:

* an echoing model: nothing cached, nothing labelled ``llm``, the call says why;
* a model that closes the connection mid-stream: the call answers within its deadline,
  extractive and labelled, nothing cached, the breaker opens;
* a model that accepts the request, sends headers and pings but never a token: the call
  answers within its deadline and the breaker opens at the first-token deadline, long
  before the 120 s request timeout; the request is closed (nothing left generating);
* a process killed (SIGKILL) mid-summary: the slices it finished are in the document's
  journal and the next process asks only for the missing ones;
* a session compaction cut by its deadline, then the process restarted: a later
  compact replaces the stand-in with the LLM summary, resuming from the kept steps.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import trio

STRESS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(STRESS))
sys.path.insert(0, str(STRESS.parent))

from attacks import ROOT, Row, guarded  # noqa: E402
from ctxtrio._app import open_context  # noqa: E402
from ctxtrio._config import Config  # noqa: E402
from ctxtrio._wiring import open_wiring  # noqa: E402
from ctxtrio.llm.breaker import BreakerState  # noqa: E402
from testkit.deadlines import until  # noqa: E402
from tests.llm.fake_stream import FakeModel, open_fake_model  # noqa: E402

if TYPE_CHECKING:
    from ctxtrio._wiring import Wiring

SPEED = 8.0  # the fake runs this many times faster than the 16 / 60 tokens a second
DEADLINE_S = 6.0


def _document(sections: int) -> str:
    return "\n\n".join(
        f"## Part {n}\n\n" + " ".join(
            f"Service svc{n}-{k} listens on port {8000 + n * 10 + k} and retries {k + 2} times." for k in range(12)
        )
        for n in range(sections)
    )  # fmt: skip


def _model(**knobs: object) -> FakeModel:
    return FakeModel(gen_rate=16.0 * SPEED, prompt_rate=60.0 * SPEED, tokens_per_event=4, **knobs)  # type: ignore[arg-type]  # knobs are FakeModel fields


def _config(data_dir: Path, model: FakeModel) -> Config:
    return Config(data_dir=data_dir, llm_base_url=model.base_url, llm_deadline_s=DEADLINE_S, audit=False)


def _summary_lines(data_dir: Path) -> int:
    """Summary records in the documents' generation journals."""
    count = 0
    for path in (data_dir / "docs").glob("*/*.jsonl"):
        for line in path.read_bytes().splitlines():
            try:
                count += json.loads(line).get("kind") == "summary"
            except ValueError:
                continue
    return count


async def _calibrated(ctx: Wiring) -> None:
    with trio.fail_after(30):
        while ctx.live.context_length is None:  # calibration found the window
            await trio.sleep(0.05)


async def _echo(work: Path) -> Row:
    async with trio.open_nursery() as nursery:
        model = await open_fake_model(nursery, _model(behaviour="echo"))
        data = work / "echo"
        async with open_wiring(_config(data, model)) as ctx:
            await _calibrated(ctx)
            await ctx.documents.ingest(text=_document(6), doc_id="d")
            summary = await ctx.documents.summarize("d", target_tokens=200, wait=until(trio.current_time() + 30))
            outline = await ctx.documents.outline("d", summarize=True, wait=until(trio.current_time() + 30))
        nursery.cancel_scope.cancel()
    kept = _summary_lines(data)
    labels = {line.summary for line in outline.entries} if outline.entries else set()
    held = summary.method == "extractive" and "rejected" in summary.note and kept == 0 and "rejected" in outline.note
    return Row(
        "S1 the model echoes the prompt (doc_summarize, doc_outline)",
        "rejected: extractive and labelled, nothing cached",
        f"summary {summary.method} ({summary.note[:70]}...), outline note {outline.note[:50]!r}, "
        f"{kept} summaries kept, {len(labels)} outline lines",
        held,
    )


async def _dropped(work: Path) -> Row:
    async with trio.open_nursery() as nursery:
        model = await open_fake_model(nursery, _model(drop_after=8))
        data = work / "drop"
        async with open_wiring(_config(data, model)) as ctx:
            await _calibrated(ctx)
            await ctx.documents.ingest(text=_document(6), doc_id="d")
            started = trio.current_time()
            summary = await ctx.documents.summarize("d", target_tokens=200, wait=until(started + DEADLINE_S))
            took = trio.current_time() - started
            breaker = ctx.llm.breaker_state if ctx.llm is not None else None
        nursery.cancel_scope.cancel()
    kept = _summary_lines(data)
    held = summary.method == "extractive" and took <= DEADLINE_S + 1 and kept == 0 and breaker is BreakerState.OPEN
    return Row(
        "S2 the model closes the connection mid-answer",
        f"answer within {DEADLINE_S:g} + 1 s, extractive and labelled, nothing cached, breaker open",
        f"{took:.1f} s, {summary.method} ({summary.note[:60]}...), {kept} kept, breaker {breaker}",
        held,
    )


async def _silent(work: Path) -> Row:
    async with trio.open_nursery() as nursery:
        model = await open_fake_model(nursery, _model(behaviour="silent", ping_s=2.0))
        async with open_wiring(_config(work / "silent", model)) as ctx:
            await _calibrated(ctx)
            await ctx.documents.ingest(text=_document(1), doc_id="d")
            started = trio.current_time()
            summary = await ctx.documents.summarize("d", target_tokens=60, wait=until(started + DEADLINE_S))
            took = trio.current_time() - started
            opened_after = None
            with trio.move_on_after(120):
                while ctx.llm is not None and ctx.llm.breaker_state is not BreakerState.OPEN:
                    await trio.sleep(0.25)
                opened_after = trio.current_time() - started
        await trio.sleep(0.5)
        left_generating = model.generating
        nursery.cancel_scope.cancel()
    held = took <= DEADLINE_S + 1 and opened_after is not None and opened_after < 60 and left_generating == 0
    return Row(
        "S3 the model accepts, pings, never sends a first token",
        f"answer within {DEADLINE_S:g} + 1 s; breaker open at the first-token deadline (< 60 s, not 120); request closed",
        f"{took:.1f} s ({summary.method}), breaker open after "
        f"{'never' if opened_after is None else f'{opened_after:.1f} s'}, {left_generating} left generating",
        held,
    )


_CHILD = """
import sys, trio
from pathlib import Path
import ctxtrio
async def main():
    config = ctxtrio.Config(data_dir=Path(sys.argv[1]), llm_base_url=sys.argv[2], audit=False)
    async with ctxtrio.open_context(config) as ctx:
        await ctx.documents.summarize("d", target_tokens=200)  # no deadline: killed while it works
trio.run(main)
"""


async def _killed(work: Path) -> Row:
    data = work / "kill"
    async with trio.open_nursery() as nursery:
        model = await open_fake_model(nursery, _model())
        async with open_context(Config(data_dir=data, llm_enabled=False, audit=False)) as ctx:
            await ctx.documents.ingest(text=_document(40), doc_id="d")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        child = await trio.lowlevel.open_process(
            [sys.executable, "-c", _CHILD, str(data), model.base_url], cwd=ROOT, env=env, stderr=subprocess.DEVNULL
        )
        with trio.move_on_after(120):
            while _summary_lines(data) < 2 and child.poll() is None:
                await trio.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        await child.wait()
        kept = _summary_lines(data)
        asked_before = len(model.served)
        answered_before = {s.prompt for s in model.served if s.finished_at is not None and s.gone_at is None}
        async with open_wiring(_config(data, model)) as ctx:
            await _calibrated(ctx)
            summary = None
            with trio.move_on_after(300):
                while summary is None or summary.method != "llm":
                    summary = await ctx.documents.summarize(
                        "d", target_tokens=200, wait=until(trio.current_time() + DEADLINE_S)
                    )
        resumed = model.served[asked_before:]
        nursery.cancel_scope.cancel()
    again = len(answered_before & {s.prompt for s in resumed})
    method = summary.method if summary is not None else "none"
    held = kept >= 2 and method == "llm" and again == 0
    return Row(
        "S4 SIGKILL mid doc_summarize, then a new process",
        "finished slices are in the journal; the new process asks only for the rest and gets the LLM summary",
        f"{kept} slices kept at the kill, {asked_before} asked before, {len(resumed)} after, "
        f"{again} asked twice, final {method}",
        held,
    )


async def _session_restart(work: Path) -> Row:
    data = work / "session"
    async with trio.open_nursery() as nursery:
        model = await open_fake_model(nursery, _model())
        async with open_wiring(_config(data, model)) as ctx:
            await _calibrated(ctx)
            for n in range(150):
                await ctx.sessions.append("s", f"Step {n} moved node-{n} to rack {n % 7}; its limit is {n * 13}.")
            first = await ctx.sessions.compact(
                "s", keep_recent=5, target_tokens=200, wait=until(trio.current_time() + 2.0)
            )
        started = time.monotonic()
        note = ""
        async with open_wiring(_config(data, model)) as ctx:  # a restart
            await _calibrated(ctx)
            with trio.move_on_after(300):
                while "replaced it as" not in note:
                    note = (
                        await ctx.sessions.compact(
                            "s", keep_recent=5, target_tokens=200, wait=until(trio.current_time() + DEADLINE_S)
                        )
                    ).note
                    await trio.sleep(1.0)
        nursery.cancel_scope.cancel()
    held = first.method != "llm" and "replaced it as" in note
    return Row(
        "S5 compaction cut by its deadline, then a restart",
        "stand-in now; a later compact swaps in the LLM summary, resumed from the kept steps",
        f"first {first.method}; after restart: {note[:80]!r} in {time.monotonic() - started:.1f} s",
        held,
    )


async def _all(work: Path) -> list[Row]:
    rows: list[Row] = []
    for name, attack, limit_s in (
        ("S1 echo", _echo, 120.0),
        ("S2 dropped", _dropped, 120.0),
        ("S3 silent", _silent, 180.0),
        ("S4 killed", _killed, 420.0),
        ("S5 session restart", _session_restart, 420.0),
    ):
        rows.extend(await guarded(name, lambda attack=attack: attack(work), limit_s))  # type: ignore[misc]  # bound per loop turn
    return rows


def run(work: Path) -> list[Row]:
    return trio.run(_all, work)
