"""Several OS processes appending to one journal at once."""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from ctxtrio.store.reading import read_journal

ROOT = Path(__file__).resolve().parents[2]


async def test_two_processes_share_a_journal(tmp_path: Path) -> None:
    """No loss, no interleaved lines, strictly increasing sequence numbers across processes."""
    count = 300

    async def worker(name: str) -> None:
        command = [sys.executable, "-m", "tests.store.append_worker", str(tmp_path), "shared", name, str(count), "8"]
        result = await trio.run_process(command, cwd=ROOT, capture_stderr=True, check=False)
        assert result.returncode == 0, result.stderr.decode()

    async with trio.open_nursery() as nursery:
        for name in ("A", "B", "C"):
            nursery.start_soon(worker, name)
    journal = tmp_path / "sessions" / "shared.jsonl"
    result = read_journal(journal)
    assert result.quarantined == [] and result.torn_tail_bytes == 0
    texts = [str(r.data["text"]) for r in result.records]
    assert sorted(texts) == sorted(f"{name}:{n}" for name in "ABC" for n in range(count))
    assert [r.seq for r in result.records] == list(range(1, 3 * count + 1))
    assert len({r.id for r in result.records}) == 3 * count
