"""Import as a backup people can trust, under kill -9 and under a racing server (issue 27).

    python stress/import_safety.py kill  --entries 300000 --kills 20
    python stress/import_safety.py race  --rounds 50

``kill``: one export of a session with ``--entries`` entries (texts holding U+2028,
U+2029, U+0085), imported by ``ctxtrio import`` that is killed with SIGKILL at
``--kills`` random points of its run; after every kill the journal is absent or
whole; then one import to the end: exactly one copy (no ``ID-2``), every entry.

``race``: each round a real stdio server appends to session ``race-N`` (its first
append after a random 0-1.5 s) while ``ctxtrio import`` stores an export of another
``race-N``; afterwards every append the server acknowledged is in ``race-N``, and the
import's report is true: either it imported ``race-N`` (its entries are the journal's
first) or it passed ``race-N`` over, saying so, and imported ``race-N-2``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

ROOT = Path(__file__).resolve().parents[1]

from mcp import Client  # noqa: E402

from ctxtrio.cli.transfer import FORMAT_VERSION, export_line  # noqa: E402
from ctxtrio.store.reading import read_journal  # noqa: E402
from testkit.servers import server_params  # noqa: E402

if TYPE_CHECKING:
    from ctxtrio.store.records import Record

ODD = "\u2028\u2029\x85"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def write_export(path: Path, session_id: str, entries: int, *, start_ts: float = 1.7e9) -> None:
    """An export file of one session holding ``entries`` entries (and its session record)."""
    records: list[Record] = [
        {"v": 1, "seq": 1, "ts": start_ts, "kind": "session", "id": session_id, "title": session_id}
    ]
    records += [
        {
            "v": 1,
            "seq": n,
            "ts": start_ts + n / 1000,
            "kind": "entry",
            "id": f"e{n}",
            "text": f"entry {n} {ODD} about item {n % 97}",
            "role": "note",
            "tags": [],
            "pinned": n % 1000 == 0,
        }
        for n in range(2, entries + 2)
    ]
    header = json.dumps({"ctxtrio_export": FORMAT_VERSION, "exported_at": time.time(), "sessions": 1})
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(header + "\n")
        for record in records:
            handle.write(export_line(session_id, record) + "\n")


def _import_command(data: Path, export: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ctxtrio", "import", str(export), "--data-dir", str(data), "--no-llm", *extra]


def journal_state(data: Path, session_id: str) -> int | None:
    """Records in the session's journal, or None when it has no journal."""
    path = data / "sessions" / f"{session_id}.jsonl"
    return len(read_journal(path).records) if path.exists() else None


def kill_rounds(work: Path, entries: int, kills: int, seed: int = 27) -> tuple[bool, str]:
    """(held, one line): ``kills`` SIGKILLs mid-import, then one import to the end."""
    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    export, data = work / "big.jsonl", work / "kill-data"
    write_export(export, "big", entries)
    started = time.perf_counter()
    full = subprocess.run(
        _import_command(work / "timing-data", export), env=ENV, cwd=ROOT, capture_output=True, check=False
    )
    whole_s = time.perf_counter() - started
    if full.returncode:
        return False, f"a plain import failed: {full.stderr.decode()[-200:]}"
    partial: list[int] = []
    for _ in range(kills):
        process = subprocess.Popen(
            _import_command(data, export), env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(0.05, 0.9) * whole_s)
        process.send_signal(signal.SIGKILL)
        process.wait()
        found = journal_state(data, "big")
        if found not in (None, entries + 1):
            partial.append(found)
    again = subprocess.run(_import_command(data, export, "--json"), env=ENV, cwd=ROOT, capture_output=True, check=False)
    ids = sorted(p.name for p in (data / "sessions").glob("big*.jsonl"))
    count = journal_state(data, "big")
    held = not partial and again.returncode == 0 and ids == ["big.jsonl"] and count == entries + 1
    return held, (
        f"{entries:,} entries, import {whole_s:.1f} s whole; {kills} kills: {len(partial)} partial journals "
        f"{partial[:3]}; then {json.loads(again.stdout)[0]['outcome'] if again.returncode == 0 else 'failed'}: "
        f"journals {ids}, {count} records"
    )


async def race_rounds(work: Path, rounds: int, seed: int = 27) -> tuple[bool, str]:
    """(held, one line): ``rounds`` imports racing a server appending to the same id."""
    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    data = work / "race-data"
    params = server_params(data, env={"PATH": os.environ.get("PATH", "")})
    lost = untrue = 0
    outcomes: dict[str, int] = {}
    async with Client(params) as client:
        for number in range(rounds):
            session_id = f"race-{number}"
            export = work / f"{session_id}.export"
            write_export(export, session_id, 200, start_ts=time.time() - 3600)
            acked: list[str] = []

            async def append(delay: float, session_id: str = session_id, acked: list[str] = acked) -> None:
                await trio.sleep(delay)
                for n in range(20):
                    text = f"server note {n} of {session_id}"
                    result = await client.call_tool(
                        "context_append", {"session_id": session_id, "text": text, "pinned": n == 0}
                    )
                    if not result.is_error:
                        acked.append(text)

            ran: list[subprocess.CompletedProcess[bytes]] = []

            async def run_import(export: Path = export, ran: list[subprocess.CompletedProcess[bytes]] = ran) -> None:
                ran.append(
                    await trio.run_process(
                        _import_command(data, export, "--json"),
                        capture_stdout=True,
                        capture_stderr=True,
                        check=False,
                        env=ENV,
                        cwd=ROOT,
                    )
                )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(append, rng.uniform(0.0, 5.0))  # the import's own start takes 1-3 s
                nursery.start_soon(run_import)
            stored = [r.data for r in read_journal(data / "sessions" / f"{session_id}.jsonl").records]
            texts = {str(r.get("text")) for r in stored if r.get("kind") == "entry"}
            lost += sum(1 for text in acked if text not in texts)
            report = json.loads(ran[0].stdout)[0] if ran[0].returncode == 0 else {}
            where = str(report.get("session_id", ""))
            outcomes[
                f"{report.get('outcome')} as {'ID' if where == session_id else where.replace(session_id, 'ID')}"
            ] = (
                outcomes.get(
                    f"{report.get('outcome')} as {'ID' if where == session_id else where.replace(session_id, 'ID')}", 0
                )
                + 1
            )
            first_entry = next((str(r.get("text")) for r in stored if r.get("kind") == "entry"), "")
            if where == session_id:
                untrue += not first_entry.startswith("entry 2 ")
            elif where == f"{session_id}-2":
                untrue += not report.get("skipped") or first_entry.startswith("entry ")
                other = journal_state(data, where)
                untrue += other != 201
            else:
                untrue += 1
    held = lost == 0 and untrue == 0
    return (
        held,
        f"{rounds} rounds: {lost} acknowledged appends lost, {untrue} untrue import reports; outcomes {outcomes}",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["kill", "race"])
    parser.add_argument("--entries", type=int, default=300_000)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxtrio-import-") as work:
        if args.what == "kill":
            held, line = kill_rounds(Path(work), args.entries, args.kills)
        else:
            held, line = trio.run(race_rounds, Path(work), args.rounds)
    print(("held: " if held else "NOT HELD: ") + line)
    return 0 if held else 1


if __name__ == "__main__":
    raise SystemExit(main())
