"""The garbage collector's full passes in a watched server (``busy_search.py``): how long each took, wall and CPU,
what they walk, and the collector settings to compare (loop28's measurements, notes/loop28-28.md)."""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path

__all__ = ["GcPasses", "census"]


class GcPasses:
    """Each full collection's wall time and CPU (the collecting thread holds the GIL: its CPU is what the pass
    costs, whatever the machine's load). Experiments, from the server's environment: BUSY_GC_THRESHOLD=a,b,c sets
    the thresholds from its start; BUSY_GC_FREEZE=1 freezes what the start left when the timed phase begins."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self._began: tuple[float, float] | None = None
        self.census: dict[str, dict[str, object]] = {}
        if (threshold := os.environ.get("BUSY_GC_THRESHOLD")) is not None:
            gc.set_threshold(*(int(x) for x in threshold.split(",")))
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._began = (time.perf_counter(), time.thread_time())
        elif self._began is not None:
            self.wall.append(time.perf_counter() - self._began[0])
            self.cpu.append(time.thread_time() - self._began[1])

    def reset(self) -> None:
        """The timed phase begins: forget the passes so far, take a census (and freeze, as an experiment)."""
        self.census["start"] = census()
        if os.environ.get("BUSY_GC_FREEZE"):
            gc.freeze()
        self.wall.clear()
        self.cpu.clear()


def census() -> dict[str, object]:
    """Objects a full pass walks (tracked, not frozen), the most common types, frozen ones, and the memory held."""
    tracked = gc.get_objects()
    kinds: dict[str, int] = {}
    for each in tracked:
        kinds[type(each).__name__] = kinds.get(type(each).__name__, 0) + 1
    status = Path("/proc/self/status").read_text().splitlines()
    memory = {line.split(":")[0]: line.split()[1] for line in status if line.startswith(("VmRSS", "VmHWM"))}
    top = sorted(kinds.items(), key=lambda item: -item[1])[:6]
    return {"tracked": len(tracked), "frozen": gc.get_freeze_count(), "top": top, "kb": memory}
