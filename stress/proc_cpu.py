"""CPU seconds of processes and threads from ``/proc`` (Linux), for the ingest benchmarks.

``TreeMeter`` follows a server and every process under it (chunking processes come and
go), sampled often enough that a child's last reading is kept after it exits.
:func:`byte_compiled` readies a checkout to be served as an install would be.
"""

from __future__ import annotations

import compileall
import os
from pathlib import Path

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

__all__ = ["TreeMeter", "byte_compiled", "children", "cpu_seconds", "rss_mb", "threads"]

_TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(stat_path: str) -> float:
    """utime + stime of a ``/proc/.../stat`` file, in seconds (0 if it is gone)."""
    try:
        fields = Path(stat_path).read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except FileNotFoundError:
            pass
    return found


def threads(pid: int) -> dict[str, tuple[str, float]]:
    """Thread id -> (name, CPU seconds) of every thread of ``pid``."""
    found: dict[str, tuple[str, float]] = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            name = Path(f"/proc/{pid}/task/{task}/comm").read_text().strip()
        except FileNotFoundError:
            continue
        found[task] = (name, cpu_seconds(f"/proc/{pid}/task/{task}/stat"))
    return found


class TreeMeter:
    """CPU seconds a process and every process below it spent since the meter started."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._seen: dict[int, float] = {}
        self._walk(pid)
        self._start = dict(self._seen)

    def sample(self) -> None:
        """Read every process of the tree now (a child that exits is kept at its last reading)."""
        self._walk(self.pid)

    def _walk(self, pid: int) -> None:
        spent = cpu_seconds(f"/proc/{pid}/stat")
        if spent:
            self._seen[pid] = max(spent, self._seen.get(pid, 0.0))
        if Path(f"/proc/{pid}").exists():
            for child in children(pid):
                self._walk(child)

    def spent(self) -> float:
        """CPU seconds since the meter started, as of the last sample."""
        return sum(seconds - self._start.get(pid, 0.0) for pid, seconds in self._seen.items())

    async def run(self, interval_s: float = 0.05) -> None:
        """Sample until cancelled (start it in a nursery; sample once more after cancelling)."""
        while True:
            self.sample()
            await trio.sleep(interval_s)


def byte_compiled(tree: Path) -> Path:
    """``tree`` with its ``ctxtrio`` package byte-compiled, as ``pip install`` leaves an install.

    A server started from a checkout compiles every module whose cached bytecode is
    missing or older than its source, at every start when PYTHONDONTWRITEBYTECODE is set
    (it is in this helper's shell), inside every figure that holds a start: compiling
    the package's 186 modules takes 0.29 CPU-s (load 15), and /work/main had 49 of them
    missing or stale, the lead's "before" checkout 157. compileall writes the cache
    whatever that variable says, and skips what is up to date.
    """
    compileall.compile_dir(tree / "ctxtrio", quiet=1)
    return tree


def rss_mb(pid: int) -> float:
    """VmRSS of a process in MB (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0
