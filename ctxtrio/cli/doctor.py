"""``doctor``: is the data dir healthy, is the search index in step, are the LLM and embedding endpoints there?

Read-only unless ``--repair``, which rebuilds the index rows of every current document
from its journal (through the store writer, one journal at a time, so servers on the
same data dir keep searching) and drops rows of journals that no longer exist, and
drops vectors of such journals or of another embedding model (``cli/embeddings.py``).
The LLM checks use the client's own probes (models, tokenize, context length); a
stopped server is one line, and a warning: the model server is optional (summaries are
then extractive). Exit 0 when nothing is BAD; ``--strict`` makes a warning fail too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from .._errors import LLMError, StoreError
from ..docs.repository import CATALOG_NAME
from ..llm.client import open_llm_client
from ..llm.messages import LLMSettings
from .aside import free_space, set_aside
from .embeddings import check_embeddings
from .library import catalog_state, open_library
from .output import emit_json, say

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from .._config import Config
    from .._wiring import Wiring
    from .commands import Command

__all__ = ["ARGUMENTS", "COMMANDS"]

#: Per-request timeout of the endpoint checks: a person is waiting.
LLM_CHECK_TIMEOUT_S = 10.0
_SAMPLE = "Hello, world"


@dataclass(slots=True)
class Report:
    """Checks in order: (area, ok, one line); ``facts`` for --json."""

    lines: list[tuple[str, bool, str]] = field(default_factory=list)
    facts: dict[str, object] = field(default_factory=dict)
    #: Areas whose line is a warning: shown as ``warn``, not failing the exit code.
    warned: set[str] = field(default_factory=set)

    def add(self, area: str, ok: bool, line: str, *, warn: bool = False) -> None:
        self.lines.append((area, ok, line))
        if warn:
            self.warned.add(area)


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repair", action="store_true", help="rebuild the search index from the journals")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too (a model server that is not there)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")


async def doctor_command(config: Config, args: argparse.Namespace, stop: trio.CancelScope) -> int:
    report = Report()
    async with open_library(config, stop) as ctx:
        report.add("data dir", *await trio.to_thread.run_sync(free_space, ctx.data))
        await _sessions(ctx, report)
        current = await _documents(ctx, report)
        try:
            await _index(ctx, report, current, repair=args.repair)
        except StoreError as exc:
            report.add("index", False, str(exc))
        ok, line, facts = await check_embeddings(config, ctx, current, repair=args.repair)
        report.add("embeddings", ok, line)
        if facts is not None:
            report.facts["embeddings"] = facts
        aside = await trio.to_thread.run_sync(set_aside, ctx.data)
        for found in aside:
            report.add(found.area, True, "; ".join([found.summary, *found.details]), warn=True)
        report.facts["set_aside"] = {
            found.area: {"files": found.files, "summary": found.summary, "shown": list(found.details)}
            for found in aside
        }
    if config.llm_enabled:
        await _llm(config, report)
    else:
        report.add("llm", True, "off (--no-llm): summaries are extractive")
    healthy = all(ok for _, ok, _ in report.lines) and not (args.strict and report.warned)
    if args.json:
        emit_json(
            {
                "ok": healthy,
                **report.facts,
                "warnings": sorted(report.warned),
                "checks": [
                    {"area": a, "ok": ok, "warn": a in report.warned, "detail": line} for a, ok, line in report.lines
                ],
            }
        )
    else:
        for area, ok, line in report.lines:
            say(f"{'warn' if area in report.warned else 'ok ' if ok else 'BAD'} {area}: {line}")
    return 0 if healthy else 1


async def _sessions(ctx: Wiring, report: Report) -> None:
    check = await ctx.sessions.check_journals()
    report.facts["sessions"] = {"count": check.sessions, "deleted": check.deleted, "records": check.records}
    damage = _damage(check.torn, check.malformed)
    report.add(
        "sessions",
        not damage,
        f"{check.sessions} ({check.deleted} deleted), {check.records} records; journals {damage or 'ok'}",
    )


def _damage(torn: int, malformed: int) -> str:
    parts = []
    if torn:
        parts.append(f"{torn} with a torn last line (a crash mid-write; skipped, healed by the next append)")
    if malformed:
        parts.append(f"{malformed} malformed line(s), copied to quarantine/ and skipped")
    return "; ".join(parts)


async def _documents(ctx: Wiring, report: Report) -> dict[str, int]:
    """Current generation journal name -> chunks the catalog promises."""
    catalog = await ctx.store.read(ctx.data.docs / CATALOG_NAME)
    state = await catalog_state(ctx)
    current: dict[str, int] = {}
    missing: list[str] = []
    torn = malformed = 0
    for entry in state.docs.values():
        path = ctx.data.docs / entry.doc_id / f"{entry.gen}.jsonl"
        read = await ctx.store.read(path)
        torn += bool(read.torn_tail_bytes)
        malformed += len(read.quarantined)
        chunks = sum(1 for r in read.records if r.kind == "chunk")
        if chunks < entry.info.chunks:
            missing.append(f"{entry.doc_id} has {chunks} of {entry.info.chunks} chunks")
        current[ctx.data.journal_name(path)] = entry.info.chunks
    damage = "; ".join([_damage(torn + bool(catalog.torn_tail_bytes), malformed + len(catalog.quarantined)), *missing])
    chunks_total = sum(current.values())
    report.facts["documents"] = {"count": len(current), "chunks": chunks_total}
    report.add(
        "documents",
        not damage.strip("; "),
        f"{len(current)}, {chunks_total} chunks; journals {damage.strip('; ') or 'ok'}",
    )
    return current


async def _index(ctx: Wiring, report: Report, current: dict[str, int], *, repair: bool) -> None:
    inventory = await ctx.store.inventory()
    behind = [name for name, chunks in current.items() if inventory.get(name, (0, 0))[1] != chunks]
    stale = [name for name in inventory if name not in current and not (ctx.data.root / name).exists()]
    if repair:
        for name in current:
            await ctx.store.reindex(ctx.data.root / name)
        for name in stale:
            await ctx.store.remove(ctx.data.root / name)  # the file is gone already: drops its rows
        inventory = await ctx.store.inventory()
        still = [name for name, chunks in current.items() if inventory.get(name, (0, 0))[1] != chunks]
        report.add(
            "index",
            not still,
            f"rebuilt {len(current)} document journal(s), dropped {len(stale)} stale; "
            + (f"{len(still)} still differ" if still else "in step"),
        )
        return
    rows = sum(inventory.get(name, (0, 0))[1] for name in current)
    report.facts["index"] = {"journals": len(inventory), "rows": rows, "behind": behind, "stale": stale}
    if behind or stale:
        report.add(
            "index",
            False,
            f"{len(behind)} document(s) not fully indexed, {len(stale)} stale journal(s): run ctxtrio doctor --repair",
        )
    else:
        report.add("index", True, f"in step: {rows} rows for {len(current)} documents")


async def _llm(config: Config, report: Report) -> None:
    settings = LLMSettings(
        base_url=config.llm_base_url,
        model=config.llm_model,
        api_key=config.llm_api_key,
        timeout_s=min(config.llm_timeout_s, LLM_CHECK_TIMEOUT_S),
        probe_timeout_s=min(config.llm_timeout_s, LLM_CHECK_TIMEOUT_S),
    )
    async with open_llm_client(settings) as llm:
        try:
            models = await llm.list_models()
        except LLMError as exc:
            report.facts["llm"] = {"url": config.llm_base_url, "reachable": False, "error": str(exc)}
            report.add(
                "llm",
                True,
                f"{config.llm_base_url} is not reachable ({exc}); summaries are extractive "
                "until it is: start the model server, fix --llm-base-url, or pass --no-llm",
                warn=True,
            )
            return
        model = config.llm_model or (models[0] if models else None)
        try:
            tokens = await llm.tokenize(_SAMPLE)
            length = await llm.context_length(model)
            if length is None and llm.tokenize_style == "llama-cpp-python":
                # llama-cpp-python reports no window, but states it when a request overflows
                # (the same probe calibration makes).
                length = await llm.context_from_overflow()
        except LLMError as exc:
            report.add("llm", False, f"{config.llm_base_url} answered /models, then failed: {exc}")
            return
    report.facts["llm"] = {
        "url": config.llm_base_url,
        "reachable": True,
        "model": model,
        "models": models,
        "tokenize": tokens is not None,
        "tokenize_sample": tokens,
        "context_length": length,
    }
    tokenize = (
        f"available ({tokens} tokens for {_SAMPLE!r})"
        if tokens is not None
        else "not offered (counts are calibrated estimates)"
    )
    context = f"{length} tokens" if length is not None else "not reported by this server (set --budget)"
    report.add(
        "llm",
        model is not None,
        f"{config.llm_base_url} reachable; model {model or 'none loaded'}; "
        f"tokenize {tokenize}; context length {context}",
    )


COMMANDS: dict[str, Command] = {"doctor": doctor_command}
ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"doctor": _args}
