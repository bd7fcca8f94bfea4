"""One long session for a week, as a user's host runs it: a stdio server a day, compacting when told to.

Each "day" spawns ``python -m ctxtrio`` over stdio through the official SDK client (this tree, the
data dir given, ``--budget 4000 --no-llm``), opens session ``week``, appends N notes of the shapes a
week of work leaves (decisions, file:line findings, measurements, code snippets, pasted logs of 20
to 200 lines, CJK, emoji; every 600th pinned), recalls every 20 notes with a small budget, asks
``context_status`` every 10 and calls ``context_compact`` with its defaults whenever the advice is
not "ok", then exits (stdin closed). It prints per day the status at the end and the p50/p95/max
of appends, recalls and compactions, and checks that every acknowledged note is in the journal.

    python stress/user_week.py --days 6 --notes 500

On 2492543 the week ended with 294 summaries holding 111,440 of 112,626 live tokens (status
"compact now" after every compaction); with summaries merged, one summary and 1,589 tokens.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from mcp import Client

from ctxtrio.store.reading import read_journal
from testkit.results import text_of
from testkit.servers import server_params

FILES = ("auth/middleware.ts", "src/ctx/store.py", "db/migrations/0042_add_index.sql", "api/handlers/user.go")
DECISIONS = (
    "keep cookie support behind LEGACY_COOKIES for one release",
    "use a 30 s timeout for the payment gateway",
    "rename getUserName to fetchDisplayName",
    "ship v2.3.1 on Friday",
)
OTHER = (
    "数据库迁移失败，需要回滚到上一版本",
    "한국어 메모: 배포는 금요일에 합니다",
    "🔥 prod is on fire again: 502s on /api/v2/orders",
)
QUERIES = ("cookie decision", "timeout", "p95 latency", "数据库", "deploy Friday", "fetchDisplayName", "502")


def note(rng: random.Random, n: int) -> tuple[str, str, list[str]]:
    """Note ``n``: (text, role, tags), one of the shapes above."""
    kind = rng.random()
    if kind < 0.25:
        return (
            f"Decision #{n}: {rng.choice(DECISIONS)} (agreed with {rng.choice(['Ana', 'Bo', 'Chen'])})",
            "decision",
            ["decision"],
        )
    if kind < 0.45:
        return f"{rng.choice(FILES)}:{rng.randint(1, 900)} swallows the error (note {n})", "note", ["finding"]
    if kind < 0.6:
        return (
            f"measured p95 latency {rng.randint(50, 900)} ms at {rng.randint(10, 500)} rps (run {n})",
            "note",
            ["numbers"],
        )
    if kind < 0.7:
        code = f"```python\ndef retry(attempts: int = {rng.randint(2, 9)}) -> None:\n    time.sleep(2 ** attempts)\n```"
        return f"Snippet {n}:\n{code}", "note", ["code"]
    if kind < 0.78:
        lines = (
            f"2026-12-0{rng.randint(1, 7)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z "
            f"{rng.choice(['INFO', 'WARN', 'ERROR'])} worker-{rng.randint(1, 8)} id={rng.randrange(16**8):08x} "
            f"took {rng.randint(1, 4000)} ms"
            for _ in range(rng.choice((20, 60, 200)))
        )
        return f"Pasted log {n}:\n" + "\n".join(lines), "note", ["log"]
    return f"{rng.choice(OTHER)} #{n}", "note", []


def spread(samples: list[float]) -> str:
    """p50 / p95 / max in ms."""
    if not samples:
        return "-"
    ordered = sorted(samples)
    at = [ordered[int(q * (len(ordered) - 1))] * 1000 for q in (0.5, 0.95)]
    return f"p50 {at[0]:.1f} p95 {at[1]:.1f} max {ordered[-1] * 1000:.0f} ms"


async def day(data: Path, number: int, notes: int, acked: list[str]) -> None:
    rng = random.Random(number)
    appends: list[float] = []
    recalls: list[float] = []
    compactions: list[float] = []
    async with Client(server_params(data, "--budget", "4000")) as client:
        await client.call_tool("context_open", {"session_id": "week", "title": "A week of work"})
        for k in range(notes):
            n = (number - 1) * notes + k + 1
            text, role, tags = note(rng, n)
            arguments: dict[str, object] = {"session_id": "week", "text": text, "role": role, "tags": tags}
            started = time.perf_counter()
            result = await client.call_tool("context_append", {**arguments, "pinned": n % 600 == 1})
            appends.append(time.perf_counter() - started)
            if result.is_error:
                raise SystemExit(f"append {n} refused: {text_of(result)}")
            acked.append(text)
            if k % 20 == 0:
                started = time.perf_counter()
                query = {
                    "session_id": "week",
                    "query": rng.choice(QUERIES),
                    "budget_tokens": rng.choice((200, 300, 500)),
                }
                await client.call_tool("context_recall", query)
                recalls.append(time.perf_counter() - started)
            if k % 10 == 0:
                status = (await client.call_tool("context_status", {"session_id": "week"})).structured_content
                if status is not None and status["advice"] != "ok":
                    started = time.perf_counter()
                    await client.call_tool("context_compact", {"session_id": "week"})
                    compactions.append(time.perf_counter() - started)
        end = text_of(await client.call_tool("context_status", {"session_id": "week"}))
    print(f"day {number}: {end.splitlines()[0]} | {end.splitlines()[1]}")
    print(f"  append {spread(appends)}; recall {spread(recalls)}; compact x{len(compactions)} {spread(compactions)}")


def check(data: Path, acked: list[str]) -> int:
    """The acknowledged notes missing from the journal (read as the CLI would)."""
    stored = {r.data.get("text") for r in read_journal(data / "sessions" / "week.jsonl").records}
    return sum(1 for text in acked if text.strip() not in stored)


async def main(days: int, notes: int, data: Path) -> int:
    acked: list[str] = []
    for number in range(1, days + 1):
        await day(data, number, notes, acked)
    missing = check(data, acked)
    journal = data / "sessions" / "week.jsonl"
    print(f"{len(acked)} notes acknowledged, {missing} missing; journal {journal.stat().st_size / 1e6:.2f} MB")
    return 1 if missing else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=6)
    parser.add_argument("--notes", type=int, default=500, help="notes a day")
    parser.add_argument("--data", type=Path, help="data dir (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        sys.exit(trio.run(main, args.days, args.notes, args.data or Path(scratch) / "data"))
