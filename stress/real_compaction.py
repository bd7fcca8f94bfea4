"""A compaction against a real small model: are all 8 decisions kept when the LLM's step is rejected?

Run from the repository root (a venv as ``stress/real_model.py`` builds it)::

    python stress/real_compaction.py --venv ~/.cache/ctxtrio-realmodel/venv [--model smollm2] [--threads 1]

It starts llama-cpp-python serving the model (:mod:`real_server`), opens the library
against it with a data dir of its own, appends the session of
``tests/text/test_entries.py`` (8 decisions, one pinned, among 30 routine status lines)
and compacts it with ``keep_recent=0, target_tokens=160``, waiting for the summary to the
end (no deadline: the LLM's verdict is what is measured). It prints every verdict of the
checks (kept, or rejected and why), the compaction's method and note, and which of the 7
unpinned decisions the summary entry holds (the pinned one is never folded). The same
session is then compacted with ``--no-llm`` for comparison.

Exit code 1 if a decision is missing from a summary whose LLM step was rejected (the
issue's Must show: "a compaction whose LLM step is rejected keeps all 8 of 8 decisions").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import _tree  # noqa: F401  (first: this tree's ctxtrio and testkit, not the installed checkout's)
import trio

STRESS = Path(__file__).resolve().parent
sys.path.insert(0, str(STRESS))

from real_server import gguf_for, model_arguments, running_server  # noqa: E402
from real_summaries import Verdicts  # noqa: E402
from slow_model import load  # noqa: E402

from ctxtrio._config import Config  # noqa: E402
from ctxtrio._wiring import open_wiring  # noqa: E402
from tests.text.test_entries import DECISIONS, session  # noqa: E402

if TYPE_CHECKING:
    from ctxtrio.memory.model import CompactResult


async def compacted(config: Config) -> CompactResult:
    """The test session appended and compacted to 160 tokens, all of it folded."""
    async with open_wiring(config) as ctx:
        if config.llm_enabled:
            with trio.fail_after(300):
                while ctx.live.context_length is None:  # calibration found the window
                    await trio.sleep(0.2)
        for entry in session():
            await ctx.sessions.append(
                "work",
                entry.text,
                role=entry.role,  # type: ignore[arg-type]  # the fixture's roles are valid Role values
                tags=list(entry.tags),
                pinned=entry.pinned,
            )
        return await ctx.sessions.compact("work", keep_recent=0, target_tokens=160)


def kept(result: CompactResult) -> list[bool]:
    """For each unpinned decision, whether the summary entry holds it word for word."""
    text = result.summary.text if result.summary is not None else ""
    return [decision.text in text for decision in DECISIONS if not decision.pinned]


async def measure(base_url: str, work: Path, verdicts: Verdicts) -> int:
    bad = 0
    runs = [("llm", Config(data_dir=work / "llm", llm_base_url=base_url, audit=False))]
    runs.append(("--no-llm", Config(data_dir=work / "no-llm", llm_enabled=False, audit=False)))
    for name, config in runs:
        started = trio.current_time()
        result = await compacted(config)
        held = kept(result)
        print(
            f"{name}: {trio.current_time() - started:.1f} s, method {result.method}; "
            f"{sum(held)} of {len(held)} unpinned decisions kept (+1 pinned, never folded); "
            f"note {result.note or '-'!r}; {load()}",
            flush=True,
        )
        for decision, there in zip([d for d in DECISIONS if not d.pinned], held, strict=True):
            print(f"    {'kept   ' if there else 'MISSING'} {decision.text}")
        if result.summary is not None:
            print(f"  summary entry: {result.summary.text[:400]!r}")
        rejected = name == "llm" and result.method != "llm"
        bad += rejected and not all(held)
    print(f"checks: {sum(len(v) for v in verdicts.kept.values())} answers kept, {verdicts.rejected} rejected")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    model_arguments(parser)
    args = parser.parse_args()
    verdicts = Verdicts()
    verdicts.install()
    gguf = gguf_for(args.model, args.venv, args.cache or args.venv.parent)
    print(f"start: {load()}", flush=True)
    with running_server(args.venv, gguf, n_ctx=8192, n_threads=args.threads) as server:
        print(f"llama-cpp-python serving {server.model} at {server.base_url}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            bad = trio.run(measure, server.base_url, Path(tmp), verdicts)
    print(f"end: {load()}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
