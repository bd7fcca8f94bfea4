"""Crash recovery: SIGKILL the server mid-storm, restart it, and check nothing acknowledged is lost.

Each round starts the real server over HTTP on 127.0.0.1:0, lets C clients hammer
``context_append``, kills the process with SIGKILL at a random moment, restarts it on the
same data dir, and checks that every append the server acknowledged is present exactly
once, both in the journals on disk and through ``context_recall`` over MCP, and that the
journals load cleanly (at most a torn final line).

    python stress/crash_recovery.py --rounds 20 --clients 8

Exits 1 on any loss. Random moments come from --seed, so a failing run can be repeated.
"""

from __future__ import annotations

import argparse
import random
import signal
import tempfile
import time
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio
from harness import start_http_server, stop_server
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]

from ctxtrio.store.reading import read_journal  # noqa: E402


async def hammer(url: str, session: str, client_no: int, acked: list[str], stop: trio.Event, first: trio.Event) -> None:
    """Append until the server dies; record each text the server acknowledged."""
    number = 0
    try:
        async with Client(url) as client:
            while not stop.is_set():
                text = f"crash-test {session} c{client_no} n{number}"
                result = await client.call_tool("context_append", {"session_id": session, "text": text})
                if result.is_error:
                    raise RuntimeError(f"append refused: {result.content}")
                acked.append(text)
                first.set()
                number += 1
    except Exception:  # noqa: BLE001 - the server was killed under us: expected, the loop ends here
        return


async def one_round(data_dir: Path, round_no: int, clients: int, rng: random.Random) -> tuple[int, int, int]:
    """Returns (acknowledged, missing, duplicated) for this round."""
    session = f"crash-{round_no}"
    process, url = await start_http_server(data_dir)
    acked: list[str] = []
    stop = trio.Event()
    first = trio.Event()
    async with trio.open_nursery() as nursery:
        for client_no in range(clients):
            nursery.start_soon(hammer, url, session, client_no, acked, stop, first)
        with trio.move_on_after(30):
            await first.wait()  # the storm is on: kill at a random moment within it
        await trio.sleep(rng.uniform(0.05, 1.5))
        process.send_signal(signal.SIGKILL)
        await process.wait()
        stop.set()
    if process.stderr is not None:
        await process.stderr.aclose()

    journal = data_dir / "sessions" / f"{session}.jsonl"
    loaded = read_journal(journal)
    if loaded.quarantined:
        print(f"round {round_no}: {len(loaded.quarantined)} malformed lines in the middle of the journal")
        return len(acked), len(acked), 0
    on_disk: dict[str, int] = {}
    for record in loaded.records:
        if record.kind == "entry":
            on_disk[str(record.data["text"])] = on_disk.get(str(record.data["text"]), 0) + 1
    missing = [text for text in acked if on_disk.get(text, 0) == 0]
    duplicated = [text for text, count in on_disk.items() if count > 1]

    # Restart and read back through MCP: the journal replays and the index heals.
    process, url = await start_http_server(data_dir)
    try:
        async with Client(url) as client:
            status = await client.call_tool("context_status", {"session_id": session})
            if status.is_error:
                print(f"round {round_no}: context_status failed after restart: {status.content}")
                missing = missing or acked[:1]
            if acked:
                probe = rng.choice(acked)
                recall = await client.call_tool(
                    "context_recall", {"session_id": session, "query": probe.split()[-2] + " " + probe.split()[-1]}
                )
                if recall.is_error or probe not in str(recall.content):
                    print(f"round {round_no}: {probe!r} not recalled after restart")
                    missing = missing or [probe]
    finally:
        await stop_server(process)
    torn = f", torn tail {loaded.torn_tail_bytes} B skipped" if loaded.torn_tail_bytes else ""
    print(f"round {round_no:2d}: acknowledged {len(acked):5d}, on disk {len(on_disk):5d}, missing {len(missing)}{torn}")
    return len(acked), len(missing), len(duplicated)


async def main(rounds: int, clients: int, seed: int) -> int:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="crash-recovery-") as tmp:
        data_dir = Path(tmp) / "data"
        started = time.perf_counter()
        totals = [0, 0, 0]
        for round_no in range(rounds):
            result = await one_round(data_dir, round_no, clients, rng)
            totals = [a + b for a, b in zip(totals, result, strict=True)]
    print(
        f"{rounds} rounds, {clients} clients, {time.perf_counter() - started:.1f} s: "
        f"{totals[0]} acknowledged appends, {totals[1]} lost, {totals[2]} duplicated"
    )
    return 1 if totals[1] or totals[2] else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", "-r", type=int, default=20)
    parser.add_argument("--clients", "-c", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    raise SystemExit(trio.run(main, args.rounds, args.clients, args.seed))
